#pragma once
// The 2-D pooling window shared by max_pool2d, avg_pool2d and global_avg_pool: its geometry
// (kernel, stride, asymmetric padding, dilation, floor or ceil output extents), the input
// taps each output reads, and the op base class that gives every pooling op its operands,
// counts and validation.
//
// Logical shapes are NCHW: x [mb, c, ih, iw] -> y [mb, c, oh, ow]; layout=nhwc only changes
// the strides (channels-last, as conv2d's layout). Along one axis, output o reads the taps
// o*s - pad_lo + k*d for k in [0, kernel); taps outside [0, in) are padding, which no pooling
// op reads as a value (max ignores it, avg counts it in the divisor or not). The output extent
// is floor((in + pad_lo + pad_hi - d*(kernel-1) - 1) / s) + 1, or with ceil_mode the ceiling,
// less one when the last window would start past the input and its leading padding (PyTorch's
// and ONNX's rule, so that no window lies in the trailing padding alone).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/attr.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::pool {

/// One axis of the window.
struct axis {
  std::int64_t in = 1, kernel = 1, stride = 1, pad_lo = 0, pad_hi = 0, dilation = 1;
  std::int64_t out = 1;
  /// The input index of tap k of output o (outside [0, in) in the padding).
  std::int64_t tap(std::int64_t o, std::int64_t k) const { return o * stride - pad_lo + k * dilation; }
};

/// The output extent of `a` (a.out is ignored); throws opval::error when the dilated kernel
/// is larger than the padded input. `name` names the axis in the error.
std::int64_t output_extent(const axis& a, bool ceil_mode, std::string_view name);

/// The geometry of one pooling problem.
struct window {
  std::int64_t mb = 1, c = 1;
  axis h, w;
  bool nhwc = false;
  dims src_shape() const { return {mb, c, h.in, w.in}; }
  dims dst_shape() const { return {mb, c, h.out, w.out}; }
  std::int64_t taps() const { return h.kernel * w.kernel; }  ///< taps per window, padding included
  std::int64_t outputs() const { return mb * c * h.out * w.out; }
};

/// Per output index along one axis: the taps inside the input, and how many taps lie inside
/// the padded input [-pad_lo, in + pad_hi) (the divisor of count_include_pad, as PyTorch).
struct axis_taps {
  std::vector<std::vector<std::int64_t>> inside;
  std::vector<std::int64_t> padded;
};
axis_taps taps_of(const axis& a);

/// The attributes of a strided, padded 2-D window: mb c ih iw kh kw sh sw pt pb pl pr, then
/// dh dw when `dilated`, ceil_mode and layout.
std::vector<attr_def> window_attrs(bool dilated);
/// Reads the window those attributes describe (dilation 1 when the op has none).
window read_window(const problem& p);

/// The values of one window handed to a pooling function: the taps inside the input, row by
/// row, and the taps inside the padded input (the count_include_pad divisor).
struct window_values {
  std::span<const double> inside;
  std::int64_t padded = 0;
};

/// fn(window_values) for every output in logical NCHW order, over `x` (logical NCHW values);
/// planes run in parallel when the problem is large.
template <class Fn>
std::vector<double> pool_each(const window& g, const std::vector<double>& x, const Fn& fn);

/// What every pooling op has in common: input x and output y in the window's layout, the
/// counts, and validation of the window (each window must hold at least one input element).
class pool_spec : public op_spec {
 public:
  /// The window of a problem (throws opval::error naming a bad attribute).
  virtual window window_of(const problem& p) const = 0;

  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;

 protected:
  /// Checks the window and the fill name (the contract is the op's to check).
  void validate_window(const problem& p) const;
};

// ------------------------------------------------------------------------- implementation

template <class Fn>
std::vector<double> pool_each(const window& g, const std::vector<double>& x, const Fn& fn) {
  const axis_taps rows = taps_of(g.h), cols = taps_of(g.w);
  const std::int64_t planes = g.mb * g.c, plane_in = g.h.in * g.w.in, plane_out = g.h.out * g.w.out;
  std::vector<double> y(static_cast<std::size_t>(planes * plane_out));
#pragma omp parallel for schedule(static) if (planes > 1 && planes * plane_out * g.taps() > 32768)
  for (std::int64_t pl = 0; pl < planes; ++pl) {
    std::vector<double> buf;
    buf.reserve(static_cast<std::size_t>(g.taps()));
    const double* plane = x.data() + pl * plane_in;
    for (std::int64_t oy = 0; oy < g.h.out; ++oy)
      for (std::int64_t ox = 0; ox < g.w.out; ++ox) {
        buf.clear();
        for (std::int64_t iy : rows.inside[static_cast<std::size_t>(oy)])
          for (std::int64_t ix : cols.inside[static_cast<std::size_t>(ox)]) buf.push_back(plane[iy * g.w.in + ix]);
        const std::int64_t padded = rows.padded[static_cast<std::size_t>(oy)] * cols.padded[static_cast<std::size_t>(ox)];
        y[static_cast<std::size_t>(pl * plane_out + oy * g.w.out + ox)] = fn(window_values{buf, padded});
      }
  }
  return y;
}

}  // namespace opval::ops::pool
