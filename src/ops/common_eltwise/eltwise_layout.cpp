#include "ops/common_eltwise/eltwise_layout.hpp"

#include <string>

#include "core/size_product.hpp"
#include "opval/error.hpp"

namespace opval::ops::eltwise {

attr_def stride_pad_attr() {
  return int_attr("stride_pad", 0,
                  "unused elements after each innermost row of every input, which also starts at "
                  "this offset (a sliced, padded view)",
                  0, 1 << 20);
}

attr_def step_attr() {
  return int_attr("step", 1, "stride of the innermost dimension of every input (x[..., ::step])", 1, 64);
}

layout strided_layout(const dims& shape, std::int64_t pad, std::int64_t step) {
  layout lay;
  lay.offset = pad;
  if (shape.empty()) return lay;
  lay.strides.assign(shape.size(), 1);
  const std::size_t last = shape.size() - 1;
  lay.strides[last] = step;
  std::int64_t row = shape[last] * step + pad;  // one padded row of the innermost dimension
  for (std::size_t i = last; i-- > 0;) {
    lay.strides[i] = row;
    row = size_product(row, shape[i], shape);
  }
  return lay;
}

layout input_layout(const problem& p, const dims& shape) {
  return strided_layout(shape, p.get_int("stride_pad"), p.get_int("step"));
}

void check_extents(const dims& shape, const char* attr) {
  for (auto e : shape)
    if (e < 0)  // zero-size tensors are valid: an empty batch, an empty sequence
      throw error(std::string(attr) + "=" + to_string(shape) + " has a negative extent");
}

}  // namespace opval::ops::eltwise
