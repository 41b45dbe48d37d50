// rms_norm: the attributes, validation, operands and fill are the trailing-axes norms' own
// (common_norm); this file names the op and registers it.
#include "ops/rms_norm/rms_norm.hpp"

namespace opval::ops::rms_norm {

std::string_view rms_norm_spec::summary() const {
  return "RMS normalization over the last norm_axes dims: x*rsqrt(mean(x^2)+eps)*gamma";
}

}  // namespace opval::ops::rms_norm

namespace {
using opval::ops::rms_norm::rms_norm_spec;
OPVAL_REGISTER_OP(rms_norm_spec);
}  // namespace
