// group_norm's error bound: the normalizations' model (common_norm/norm_common.cpp, derived
// there; docs/ops/group_norm.md) with n = C/groups * spatial elements per row. It holds for any
// order of visiting a group (NCHW or channels-last, split over spatial tiles and merged with
// Chan's formula), two-pass or Welford statistics, and a fused or folded per-channel affine.
#include "ops/group_norm/group_norm.hpp"

namespace opval::ops::group_norm {

std::vector<error_bound> group_norm_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                                std::span<const tensor> in, std::span<const tensor>) const {
  return norm_bound(p, f, o, in);
}

}  // namespace opval::ops::group_norm
