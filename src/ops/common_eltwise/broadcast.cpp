#include "ops/common_eltwise/broadcast.hpp"

#include <algorithm>

#include "opval/error.hpp"

namespace opval::ops::eltwise {
namespace {

// Strides of `shape` right-aligned to `rank` dimensions, 0 where the extent is 1 or missing.
dims aligned_strides(const dims& shape, std::size_t rank) {
  const dims own = row_major_strides(shape);
  dims s(rank, 0);
  const std::size_t lead = rank - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) s[lead + i] = shape[i] == 1 ? 0 : own[i];
  return s;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> broadcast_plan::sources(std::int64_t linear) const {
  std::int64_t a = 0, b = 0;
  for (std::size_t d = out.size(); d-- > 0;) {
    const std::int64_t i = linear % out[d];
    linear /= out[d];
    a += i * stride_a[d];
    b += i * stride_b[d];
  }
  return {a, b};
}

broadcast_plan plan_broadcast(const dims& a, const dims& b) {
  broadcast_plan p;
  const std::size_t rank = std::max(a.size(), b.size());
  p.out.assign(rank, 1);
  for (std::size_t k = 0; k < rank; ++k) {  // k counts from the innermost dimension
    const std::int64_t ea = k < a.size() ? a[a.size() - 1 - k] : 1;
    const std::int64_t eb = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      throw error("shape_a=" + to_string(a) + " and shape_b=" + to_string(b) +
                  " do not broadcast (trailing extents must match or be 1)");
    p.out[rank - 1 - k] = ea == 1 ? eb : ea;  // NumPy: 1 broadcasts, to 0 too
  }
  p.stride_a = aligned_strides(a, rank);
  p.stride_b = aligned_strides(b, rank);
  return p;
}

}  // namespace opval::ops::eltwise
