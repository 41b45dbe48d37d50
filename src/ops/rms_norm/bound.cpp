// rms_norm's error bound: the normalizations' model (common_norm/norm_common.cpp, derived there;
// docs/ops/rms_norm.md), which holds for any summation order, two-pass or Welford/Chan statistics
// and a fused or folded affine step.
#include "ops/rms_norm/rms_norm.hpp"

namespace opval::ops::rms_norm {

std::vector<error_bound> rms_norm_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                           std::span<const tensor> in, std::span<const tensor>) const {
  return norm_bound(p, f, o, in);
}

}  // namespace opval::ops::rms_norm
