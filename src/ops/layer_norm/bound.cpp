// layer_norm's error bound: the normalizations' model (common_norm/norm_common.cpp, derived there;
// docs/ops/layer_norm.md), which holds for any summation order, two-pass or Welford/Chan statistics
// and a fused or folded affine step.
#include "ops/layer_norm/layer_norm.hpp"

namespace opval::ops::layer_norm {

std::vector<error_bound> layer_norm_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                           std::span<const tensor> in, std::span<const tensor>) const {
  return norm_bound(p, f, o, in);
}

}  // namespace opval::ops::layer_norm
