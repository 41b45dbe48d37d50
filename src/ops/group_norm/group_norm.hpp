#pragma once
// group_norm: y = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c], the statistics taken per
// sample over each group of C/groups consecutive channels and all their spatial positions
// (Wu & He 2018; PyTorch's GroupNorm, ONNX GroupNormalization-21). groups=1 normalizes each
// sample over C and all spatial dims (layer_norm over them, but with per-channel parameters);
// groups=C is instance normalization.
// x's logical shape is N x C x spatial... (any number of spatial dims, none included);
// layout=nhwc only changes the strides (channels-last, PyTorch's channels_last, oneDNN's
// nwc/nhwc/ndhwc), as conv2d's layout does. gamma and beta have shape C.
// The statistics, reference, emulation and error model are the normalizations'
// (common_norm/norm_common): this op gives the geometry of a row (one group of one sample,
// contiguous in the logical order) and which parameter each element of it uses (its channel).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_norm/norm_common.hpp"

namespace opval::ops::group_norm {

/// The typed parameters of one problem, read once per call.
struct group_norm_params {
  std::int64_t batch = 0;     ///< N
  std::int64_t channels = 0;  ///< C
  std::int64_t spatial = 1;   ///< product of the spatial extents (1 without any)
  std::int64_t groups = 1;
  bool nhwc = false;
};
group_norm_params params_of(const problem& p);

/// The group_norm op (statistics in f32: contracts f32, bf16:f32:bf16, f16:f32:f16).
class group_norm_spec final : public norm::norm_spec {
 public:
  group_norm_spec() : norm_spec(norm::norm_kind::layer) {}
  std::string_view name() const override { return "group_norm"; }
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  void validate(const problem& p) const override;
  norm::geometry geometry_of(const problem& p) const override;
  layout data_layout(const problem& p) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// Group sizes from one channel to all, 0 to 3 spatial dims, layouts, eps, affine, the fills.
  feature_table features() const override;
};

}  // namespace opval::ops::group_norm
