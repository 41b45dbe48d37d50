#include "ops/common_eltwise/unary_spec.hpp"

#include <string>

#include "opval/error.hpp"

namespace opval::ops::eltwise {

attr_def unary_spec::shape_attr() {
  return dims_attr("shape", {1000}, "logical shape of x and y ('scalar' for rank 0)");
}

void unary_spec::validate_operands(const problem& p) const {
  check_extents(p.get_dims("shape"), "shape");
  if (p.dt.wei != p.dt.src)
    throw error(std::string(name()) + " has one input: contract '" + p.dt.types_string() +
                "' names a second input type");
}

std::vector<operand> unary_spec::inputs(const problem& p) const {
  const dims& shape = p.get_dims("shape");
  return {{"x", p.dt.src, shape, input_layout(p, shape)}};
}

std::vector<operand> unary_spec::outputs(const problem& p) const {
  return {{"y", p.dt.dst, p.get_dims("shape"), {}}};
}

op_counts unary_spec::counts(const problem& p) const {
  const double n = static_cast<double>(element_count(p.get_dims("shape")));
  return {n * flops_per_element(p),
          n * (traits(p.dt.src).size_bytes + traits(p.dt.dst).size_bytes)};
}

}  // namespace opval::ops::eltwise
