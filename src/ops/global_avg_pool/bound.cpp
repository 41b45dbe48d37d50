// global_avg_pool: the mean pools' error model (common_pool/mean_pool.hpp) with n = ih*iw:
// gamma(n)*mean|x| plus the division. f16 accumulation over a plane of n*u_f16 >= 1/2 (about
// 1024 elements and more) has no meaningful bound and is judged relative-to-sim.
#include "ops/global_avg_pool/global_avg_pool.hpp"

namespace opval::ops::global_avg_pool {

std::vector<error_bound> global_avg_pool_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                                     std::span<const tensor> in, std::span<const tensor> ref) const {
  return mean_bound(p, f, o, in, ref);
}

}  // namespace opval::ops::global_avg_pool
