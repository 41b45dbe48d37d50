// max_pool2d: the error model is 0. The result is one of the window's stored values, and dst
// is src's type: any kernel that returns the window's maximum (in any order of comparisons,
// with any blocking or vectorization) is exact; one that returns anything else is wrong.
#include <algorithm>

#include "ops/max_pool2d/max_pool2d.hpp"

namespace opval::ops::max_pool2d {

std::vector<error_bound> max_pool2d_spec::bound(const problem& p, const fill_traits&, const bound_options&,
                                                std::span<const tensor>, std::span<const tensor>) const {
  error_bound b;
  b.compute = tensor(dtype::f64, window_of(p).dst_shape());
  double* out = b.compute.data_as<double>();
  std::fill(out, out + b.compute.numel(), 0.0);
  b.formula = "max is exact: 0";
  return {b};
}

}  // namespace opval::ops::max_pool2d
