// layer_norm: y = (x - mean) / sqrt(var + eps) * gamma + beta over the last norm_axes dims.
// Everything but the name lives in norm_common.hpp, shared with rms_norm.
#include "ops/layer_norm/norm_common.hpp"

namespace opval::ops::layer_norm {

/// The layer_norm op (statistics in f32: contracts f32, bf16:f32:bf16, f16:f32:f16).
class layer_norm_spec final : public norm::norm_spec {
 public:
  layer_norm_spec() : norm_spec(norm::norm_kind::layer) {}
  std::string_view name() const override { return "layer_norm"; }
  std::string_view summary() const override {
    return "layer normalization over the last norm_axes dims: (x-mean)*rsqrt(var+eps)*gamma+beta";
  }
};

}  // namespace opval::ops::layer_norm

namespace {
using opval::ops::layer_norm::layer_norm_spec;
OPVAL_REGISTER_OP(layer_norm_spec);
}  // namespace
