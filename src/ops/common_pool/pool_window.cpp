// The pooling window (pool_window.hpp): output extents, taps, attributes and the operands,
// counts and validation every pooling op shares.
#include "ops/common_pool/pool_window.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "opval/contract.hpp"
#include "opval/error.hpp"

namespace opval::ops::pool {

std::int64_t output_extent(const axis& a, bool ceil_mode, std::string_view name) {
  const std::int64_t span = a.in + a.pad_lo + a.pad_hi - a.dilation * (a.kernel - 1) - 1;
  if (span < 0)
    throw error(fmt::format("the dilated kernel along {} ({} taps {} apart) is larger than the padded input ({} + {} + {})",
                            name, a.kernel, a.dilation, a.in, a.pad_lo, a.pad_hi));
  std::int64_t out = (ceil_mode ? span + a.stride - 1 : span) / a.stride + 1;
  // The last window must start inside the input or its leading padding.
  if (ceil_mode && (out - 1) * a.stride >= a.in + a.pad_lo) --out;
  return out;
}

axis_taps taps_of(const axis& a) {
  axis_taps t;
  t.inside.resize(static_cast<std::size_t>(a.out));
  t.padded.resize(static_cast<std::size_t>(a.out));
  for (std::int64_t o = 0; o < a.out; ++o)
    for (std::int64_t k = 0; k < a.kernel; ++k) {
      const std::int64_t i = a.tap(o, k);
      if (i >= 0 && i < a.in) t.inside[static_cast<std::size_t>(o)].push_back(i);
      if (i >= -a.pad_lo && i < a.in + a.pad_hi) ++t.padded[static_cast<std::size_t>(o)];
    }
  return t;
}

std::vector<attr_def> window_attrs(bool dilated) {
  std::vector<attr_def> defs{
      int_attr("mb", 1, "minibatch", 0),
      int_attr("c", 1, "channels", 0),
      int_attr("ih", 8, "input height", 1),
      int_attr("iw", 8, "input width", 1),
      int_attr("kh", 2, "kernel height", 1),
      int_attr("kw", 2, "kernel width", 1),
      int_attr("sh", 2, "stride along h", 1),
      int_attr("sw", 2, "stride along w", 1),
      int_attr("pt", 0, "padding at the top", 0),
      int_attr("pb", 0, "padding at the bottom", 0),
      int_attr("pl", 0, "padding at the left", 0),
      int_attr("pr", 0, "padding at the right", 0),
  };
  if (dilated) {
    defs.push_back(int_attr("dh", 1, "dilation along h (1 = dense)", 1));
    defs.push_back(int_attr("dw", 1, "dilation along w (1 = dense)", 1));
  }
  defs.push_back(bool_attr("ceil_mode", false, "output extents rounded up (a last, partial window)"));
  defs.push_back(choice_attr("layout", "nchw", {"nchw", "nhwc"}, "memory layout of x and y"));
  return defs;
}

window read_window(const problem& p) {
  const bool dilated = p.spec().schema().find("dh") != nullptr;
  window g;
  g.mb = p.get_int("mb");
  g.c = p.get_int("c");
  g.h = {p.get_int("ih"), p.get_int("kh"), p.get_int("sh"), p.get_int("pt"), p.get_int("pb"),
         dilated ? p.get_int("dh") : 1};
  g.w = {p.get_int("iw"), p.get_int("kw"), p.get_int("sw"), p.get_int("pl"), p.get_int("pr"),
         dilated ? p.get_int("dw") : 1};
  g.nhwc = p.get_choice("layout") == "nhwc";
  const bool ceil_mode = p.get_bool("ceil_mode");
  g.h.out = output_extent(g.h, ceil_mode, "h");
  g.w.out = output_extent(g.w, ceil_mode, "w");
  if (double(g.mb) * double(g.c) * double(std::max(g.h.in, g.h.out)) * double(std::max(g.w.in, g.w.out)) *
          double(g.taps()) > 0x1p62)
    throw error("mb*c*ih*iw*kh*kw has more than 2^62 terms");
  return g;
}

namespace {

layout layout_of(const window& g, const dims& shape) {
  layout lay;
  if (g.nhwc) lay.strides = channels_last_strides(shape);
  return lay;
}

// Every output along `a` must read at least one input element: a window in the padding alone
// has no value (max would be -inf, avg 0/0).
void check_axis(const axis& a, std::string_view name, std::string_view pads) {
  const axis_taps t = taps_of(a);
  for (std::int64_t o = 0; o < a.out; ++o)
    if (t.inside[static_cast<std::size_t>(o)].empty())
      throw error(fmt::format("output {} along {} reads only padding ({}={}/{}, kernel {}, dilation {}): "
                              "the padding must be smaller than the window",
                              o, name, pads, a.pad_lo, a.pad_hi, a.kernel, a.dilation));
}

}  // namespace

std::vector<operand> pool_spec::inputs(const problem& p) const {
  const window g = window_of(p);
  return {{"x", p.dt.src, g.src_shape(), layout_of(g, g.src_shape())}};
}

std::vector<operand> pool_spec::outputs(const problem& p) const {
  const window g = window_of(p);
  return {{"y", p.dt.dst, g.dst_shape(), layout_of(g, g.dst_shape())}};
}

op_counts pool_spec::counts(const problem& p) const {
  const window g = window_of(p);
  const double in = double(element_count(g.src_shape())), out = double(g.outputs());
  return {out * double(g.taps()), in * traits(p.dt.src).size_bytes + out * traits(p.dt.dst).size_bytes};
}

void pool_spec::validate_window(const problem& p) const {
  const window g = window_of(p);
  check_axis(g.h, "h", "pt/pb");
  check_axis(g.w, "w", "pl/pr");
  const std::vector<std::string> f = fills();
  if (p.fill != "default" && std::find(f.begin(), f.end(), p.fill) == f.end())
    throw error(fmt::format("{} does not know fill={}", name(), p.fill));
}

}  // namespace opval::ops::pool
