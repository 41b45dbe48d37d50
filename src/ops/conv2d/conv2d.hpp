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
#include <string>
#include <string_view>
#include <vector>

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

/// Descriptor lines of the suite `tag` (smoke, regression).
std::vector<std::string> conv2d_suite(std::string_view tag);

}  // namespace opval::ops::conv2d
