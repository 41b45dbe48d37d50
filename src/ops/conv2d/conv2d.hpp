#pragma once
// conv2d: grouped, strided, dilated 2-D convolution with asymmetric padding, NCHW or NHWC,
// and the GEMM epilogue of common_gemm (bias, activation, residual, int8/fp8 scales).
//
// Logical shapes are always NCHW / OIHW (the reference reads them in that order); `layout`
// only changes the strides: nhwc stores src, dst and residual channels-last and the weights
// OHWI (PyTorch channels_last, oneDNN nhwc/ohwi). Inputs in order: src [mb, ic, ih, iw],
// weights [oc, ic/g, kh, kw], then bias [oc], residual (dst's shape), scale_b [oc]
// (scale_b_mode=per_channel). Output: dst [mb, oc, oh, ow] with
// oh = (ih + pt + pb - dh*(kh-1) - 1) / sh + 1 (dilation 1 = dense, as PyTorch).
// The sum over K = ic/g*kh*kw terms, padded taps included, is the dot product the epilogue
// gets; integer inputs pad with zp_a so padded taps contribute (zp_a - zp_a) * w = 0.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/attr.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::conv2d {

/// The geometry of one conv2d problem.
struct conv_shape {
  std::int64_t mb, ic, oc, ih, iw, kh, kw, sh, sw, pt, pb, pl, pr, dh, dw, g;
  std::int64_t oh, ow;
  bool nhwc;
  std::int64_t icg() const { return ic / g; }
  std::int64_t ocg() const { return oc / g; }
  std::int64_t k() const { return icg() * kh * kw; }  ///< terms per output
};

/// Reads and checks the geometry (throws opval::error naming the attribute).
conv_shape read_shape(const problem& p);

/// im2col of image n, group gi: a (K x oh*ow) row-major matrix of src's logical values
/// (`src` holds all of src in NCHW order); taps in the padding read `pad`.
std::vector<double> im2col(const conv_shape& s, const std::vector<double>& src, std::int64_t n,
                           std::int64_t gi, double pad);
/// The same transposed: an (oh*ow x K) row-major matrix, one row per output position.
std::vector<double> im2row(const conv_shape& s, const std::vector<double>& src, std::int64_t n,
                           std::int64_t gi, double pad);

/// Descriptor lines of the suite `tag` (smoke, regression).
std::vector<std::string> conv2d_suite(std::string_view tag);

/// Exact dot products of every output element, NCHW order, or the sums of their products'
/// magnitudes or squares (`v`).
std::vector<double> exact_dots(const conv_shape& s, const common_gemm::epilogue_spec& e, const tensor& src,
                               const tensor& wei, common_gemm::dot_values v);

/// The epilogue operands of output element `linear` (NCHW order): channel (linear / oh*ow) % oc.
common_gemm::epilogue_reader reader_of(const conv_shape& s, const common_gemm::epilogue_spec& e,
                                       std::span<const tensor> in);

/// The conv2d op. spec.cpp: name, schema, contracts, validation, operands, counts, fill and
/// registration; reference.cpp: the fp64 reference and the contract-exact simulation;
/// bound.cpp: the error model; suite.cpp: the suites; sample.cpp: sampled verification (the
/// output sample and the checksums).
class conv2d_spec final : public op_spec {
 public:
  conv2d_spec();
  std::string_view name() const override;
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  std::vector<std::string> contracts() const override;
  // The epilogue's activations (gelu, silu) take the functions' accuracy.
  std::vector<std::string_view> contract_options() const override {
    return {"in_round", "acc_round", "denorm", "dst_round", "ulp:exp", "ulp:erf", "ulp:tanh", "ulp:div"};
  }
  void validate(const problem& p) const override;
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::optional<output_sample> sample(const problem& p, std::span<const tensor> in, std::uint64_t seed) const override;
  std::vector<checksum_result> checksums(const problem& p, const fill_traits& f, const bound_options& o,
                                         std::span<const tensor> in, std::span<const tensor> out,
                                         std::uint64_t seed) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// Geometries (strides, dilation, groups, depthwise, padding), layouts, the epilogue, the fills.
  feature_table features() const override;

 private:
  attr_schema schema_;
};

}  // namespace opval::ops::conv2d
