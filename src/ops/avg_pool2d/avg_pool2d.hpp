#pragma once
// avg_pool2d: y[n, c, oy, ox] = the mean of x over the window of (oy, ox): kernel kh x kw,
// stride sh x sw, asymmetric padding pt/pb/pl/pr, floor or ceil output extents (PyTorch's
// avg_pool2d, ONNX AveragePool without dilations, oneDNN's pooling_avg_include_padding /
// _exclude_padding). count_include_pad=1 divides by the taps inside the padded input
// (padding counts as zeros), 0 by the taps inside the input. NCHW or NHWC
// (common_pool/pool_window.hpp); numerics and error model: common_pool/mean_pool.hpp.
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_pool/mean_pool.hpp"

namespace opval::ops::avg_pool2d {

class avg_pool2d_spec final : public pool::mean_pool_spec {
 public:
  std::string_view name() const override { return "avg_pool2d"; }
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  pool::window window_of(const problem& p) const override;
  pool::divisor_rule divisor_of(const problem& p) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// The pooling windows, the layouts, the fills, count_include_pad.
  feature_table features() const override;
};

}  // namespace opval::ops::avg_pool2d
