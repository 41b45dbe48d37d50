// group_norm's fp64 reference and its contract-exact emulation (the sim backend's kernel):
// the normalizations', over one row per (sample, group) with per-channel parameters
// (common_norm/norm_common.cpp).
#include "ops/group_norm/group_norm.hpp"

namespace opval::ops::group_norm {

void group_norm_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  norm_reference(p, in, out);
}

void group_norm_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  simulate_with(p, in, out, {});
}

}  // namespace opval::ops::group_norm
