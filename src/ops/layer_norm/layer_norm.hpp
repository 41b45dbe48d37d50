#pragma once
// layer_norm: y = (x - mean) / sqrt(var + eps) * gamma + beta over the last norm_axes dims.
// Its geometry (the trailing norm_axes dims form a row; gamma and beta are shaped as them) is
// common_norm/trailing_axes; the statistics, reference, emulation and error model are
// common_norm/norm_common.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_norm/trailing_axes.hpp"

namespace opval::ops::layer_norm {

/// The layer_norm op (statistics in f32: contracts f32, bf16:f32:bf16, f16:f32:f16).
class layer_norm_spec final : public norm::trailing_axes_spec {
 public:
  layer_norm_spec() : trailing_axes_spec(norm::norm_kind::layer) {}
  std::string_view name() const override { return "layer_norm"; }
  std::string_view summary() const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
};

}  // namespace opval::ops::layer_norm
