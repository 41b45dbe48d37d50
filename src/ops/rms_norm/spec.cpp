// rms_norm: y = x / sqrt(mean(x^2) + eps) * gamma over the last norm_axes dims.
// Everything but the name lives in layer_norm/norm_common.hpp, shared with layer_norm.
#include "ops/layer_norm/norm_common.hpp"

namespace opval::ops::rms_norm {

/// The rms_norm op (mean square in f32: contracts f32, bf16:f32:bf16, f16:f32:f16).
class rms_norm_spec final : public norm::norm_spec {
 public:
  rms_norm_spec() : norm_spec(norm::norm_kind::rms) {}
  std::string_view name() const override { return "rms_norm"; }
  std::string_view summary() const override {
    return "RMS normalization over the last norm_axes dims: x*rsqrt(mean(x^2)+eps)*gamma";
  }
};

}  // namespace opval::ops::rms_norm

namespace {
using opval::ops::rms_norm::rms_norm_spec;
OPVAL_REGISTER_OP(rms_norm_spec);
}  // namespace
