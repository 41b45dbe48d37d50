// avg_pool2d: the fp64 reference (pairwise fp64 sum of the window over the divisor) and the
// contract emulation (forward sum in acc, divided in acc, rounded to dst), both the mean
// pools' (common_pool/mean_pool.cpp).
#include "ops/avg_pool2d/avg_pool2d.hpp"

namespace opval::ops::avg_pool2d {

void avg_pool2d_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  mean_reference(p, in, out);
}

void avg_pool2d_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  pool::mean_pool_simulate(p, in, out, {});
}

}  // namespace opval::ops::avg_pool2d
