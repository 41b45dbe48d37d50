// avg_pool2d: the mean pools' error model (common_pool/mean_pool.hpp): gamma(kh*kw) times
// sum|x| over the divisor, plus the division, for any summation order and for terms scaled
// before the sum; the rounding to dst is the runner's.
#include "ops/avg_pool2d/avg_pool2d.hpp"

namespace opval::ops::avg_pool2d {

std::vector<error_bound> avg_pool2d_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                                std::span<const tensor> in, std::span<const tensor> ref) const {
  return mean_bound(p, f, o, in, ref);
}

}  // namespace opval::ops::avg_pool2d
