#pragma once
// global_avg_pool: y[n, c, 0, 0] = the mean of x[n, c, :, :] over the whole plane (ONNX
// GlobalAveragePool on a 4-D input, PyTorch's adaptive_avg_pool2d(x, 1), the head of every
// ResNet). The window of common_pool with kernel = the plane, stride 1 and no padding, NCHW or
// NHWC; numerics and error model: common_pool/mean_pool.hpp (n = ih*iw terms per output).
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_pool/mean_pool.hpp"

namespace opval::ops::global_avg_pool {

class global_avg_pool_spec final : public pool::mean_pool_spec {
 public:
  std::string_view name() const override { return "global_avg_pool"; }
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  pool::window window_of(const problem& p) const override;
  pool::divisor_rule divisor_of(const problem&) const override { return pool::divisor_rule::inside; }
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// Planes from 1x1 to 56x56, empty ones, the layouts, the fills.
  feature_table features() const override;
};

}  // namespace opval::ops::global_avg_pool
