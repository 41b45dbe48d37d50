#pragma once
// max_pool2d: y[n, c, oy, ox] = the largest x over the window of (oy, ox): kernel kh x kw,
// stride, asymmetric padding, dilation, floor or ceil output extents (PyTorch's max_pool2d,
// ONNX MaxPool, oneDNN's pooling_max). Padding is never a candidate (as if -inf).
// Semantics: NaN wins (a window holding a NaN gives NaN, as PyTorch), max(-0, +0) = +0 (a
// kernel returning -0 there is reported, neg_zero_mismatch, but does not fail); the result is
// one of the window's stored values, so every contract is exact: dst is src's type.
// Error model: 0. A kernel that reads padding as 0, drops the window's last row, takes the
// wrong window or ignores NaN fails with the element named.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_pool/pool_window.hpp"

namespace opval::ops::max_pool2d {

class max_pool2d_spec final : public pool::pool_spec {
 public:
  std::string_view name() const override { return "max_pool2d"; }
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  std::vector<std::string> contracts() const override;
  /// Exact: the output is one of the inputs, nothing is rounded.
  std::vector<std::string_view> contract_options() const override { return {}; }
  pool::window window_of(const problem& p) const override;
  void validate(const problem& p) const override;
  /// Floats: the generic fills (`large`: half of src's largest value); integers: uniform over
  /// the type's range (`positive`: above zero, `exact`: [-4, 4], many ties); no `special`.
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// The pooling windows with the dilated ones, the layouts, the fills.
  feature_table features() const override;
};

}  // namespace opval::ops::max_pool2d
