// rms_norm's fp64 reference and its contract-exact emulation (the sim backend's kernel): the
// family's, over this op's geometry (common_norm/norm_common.cpp).
#include "ops/rms_norm/rms_norm.hpp"

namespace opval::ops::rms_norm {

void rms_norm_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  norm_reference(p, in, out);
}

void rms_norm_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  simulate_with(p, in, out, {});
}

}  // namespace opval::ops::rms_norm
