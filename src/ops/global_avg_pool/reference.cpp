// global_avg_pool: the mean pools' fp64 reference and contract emulation
// (common_pool/mean_pool.cpp) over the whole plane.
#include "ops/global_avg_pool/global_avg_pool.hpp"

namespace opval::ops::global_avg_pool {

void global_avg_pool_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  mean_reference(p, in, out);
}

void global_avg_pool_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  pool::mean_pool_simulate(p, in, out, {});
}

}  // namespace opval::ops::global_avg_pool
