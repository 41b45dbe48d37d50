// The conv2d op spec: im2col + the shared GEMM machinery of common_gemm.
#include <algorithm>
#include <cmath>

#include "ops/common_gemm/blocked_gemm.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::conv2d {

using namespace common_gemm;

conv_shape read_shape(const problem& p) {
  conv_shape s{};
  s.mb = p.get_int("mb");
  s.ic = p.get_int("ic");
  s.oc = p.get_int("oc");
  s.ih = p.get_int("ih");
  s.iw = p.get_int("iw");
  s.kh = p.get_int("kh");
  s.kw = p.get_int("kw");
  s.sh = p.get_int("sh");
  s.sw = p.get_int("sw");
  s.pt = p.get_int("pt");
  s.pb = p.get_int("pb");
  s.pl = p.get_int("pl");
  s.pr = p.get_int("pr");
  s.dh = p.get_int("dh");
  s.dw = p.get_int("dw");
  s.g = p.get_int("g");
  s.nhwc = p.get_choice("layout") == "nhwc";
  if (s.ic % s.g != 0 || s.oc % s.g != 0)
    throw error("g=" + std::to_string(s.g) + " must divide ic=" + std::to_string(s.ic) + " and oc=" + std::to_string(s.oc));
  const std::int64_t eh = s.ih + s.pt + s.pb - s.dh * (s.kh - 1) - 1;
  const std::int64_t ew = s.iw + s.pl + s.pr - s.dw * (s.kw - 1) - 1;
  if (eh < 0 || ew < 0)
    throw error("the dilated kernel (kh, kw, dh, dw) is larger than the padded input (ih, iw, pt, pb, pl, pr)");
  s.oh = eh / s.sh + 1;
  s.ow = ew / s.sw + 1;
  // k() and the counts multiply three extents: keep them within int64.
  if (double(s.icg()) * double(s.kh) * double(s.kw) > 0x1p62 || double(s.mb) * double(s.oc) * double(s.oh) * double(s.ow) > 0x1p62)
    throw error("ic/g*kh*kw or mb*oc*oh*ow has more than 2^62 terms");
  return s;
}

std::vector<double> im2col(const conv_shape& s, const std::vector<double>& src, std::int64_t n,
                           std::int64_t gi, double pad) {
  const std::int64_t ohw = s.oh * s.ow;
  std::vector<double> col(s.k() * ohw);
  for (std::int64_t c = 0; c < s.icg(); ++c) {
    const double* plane = src.data() + ((n * s.ic) + gi * s.icg() + c) * s.ih * s.iw;
    for (std::int64_t ky = 0; ky < s.kh; ++ky)
      for (std::int64_t kx = 0; kx < s.kw; ++kx) {
        double* row = col.data() + ((c * s.kh + ky) * s.kw + kx) * ohw;
        for (std::int64_t oy = 0; oy < s.oh; ++oy) {
          const std::int64_t iy = oy * s.sh - s.pt + ky * s.dh;
          for (std::int64_t ox = 0; ox < s.ow; ++ox) {
            const std::int64_t ix = ox * s.sw - s.pl + kx * s.dw;
            const bool inside = iy >= 0 && iy < s.ih && ix >= 0 && ix < s.iw;
            row[oy * s.ow + ox] = inside ? plane[iy * s.iw + ix] : pad;
          }
        }
      }
  }
  return col;
}

namespace {

// Strides of a logical NCHW (or OIHW) tensor stored channels-last.
layout channels_last(const dims& shape) {
  const std::int64_t c = shape[1], h = shape[2], w = shape[3];
  layout lay;
  lay.strides = {c * h * w, 1, w * c, c};
  return lay;
}

// Runs `fn(n, gi, weights_offset, dst_offset)` for every (image, group) GEMM, in parallel
// when there is more than one (the reference GEMM inside then runs single-threaded).
template <class Fn>
void for_each_gemm(const conv_shape& s, Fn&& fn) {
  const std::int64_t tasks = s.mb * s.g, ohw = s.oh * s.ow;
#pragma omp parallel for schedule(dynamic) if (tasks > 1 && tasks * s.ocg() * ohw * s.k() > 32768)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t n = t / s.g, gi = t % s.g;
    fn(n, gi, gi * s.ocg() * s.k(), (n * s.oc + gi * s.ocg()) * ohw);
  }
}

// Exact (or absolute-value) dot products of every output element, NCHW order.
std::vector<double> exact_dots(const conv_shape& s, const epilogue_spec& e, const tensor& src,
                               const tensor& wei, bool absolute) {
  const auto x = dot_operand(src, e.zp_a, absolute), w = dot_operand(wei, e.zp_b, absolute);
  std::vector<double> out(s.mb * s.oc * s.oh * s.ow);
  for_each_gemm(s, [&](std::int64_t n, std::int64_t gi, std::int64_t wo, std::int64_t oo) {
    const std::vector<double> col = im2col(s, x, n, gi, 0.0);
    reference_gemm(s.ocg(), s.oh * s.ow, s.k(), w.data() + wo, col.data(), out.data() + oo);
  });
  return out;
}

// The epilogue operands of output element `linear` (NCHW order): channel (linear / oh*ow) % oc.
epilogue_reader reader_of(const conv_shape& s, const epilogue_spec& e, std::span<const tensor> in) {
  return epilogue_reader(e, in, s.oh * s.ow, s.oc);
}

class conv2d_spec final : public op_spec {
 public:
  std::string_view name() const override { return "conv2d"; }
  std::string_view summary() const override {
    return "2-D convolution (NCHW/NHWC, stride, asymmetric padding, dilation, groups) with bias, activation, residual; float, fp8, int8";
  }
  const attr_schema& schema() const override { return schema_; }
  std::vector<std::string> contracts() const override { return gemm_contracts(); }

  void validate(const problem& p) const override {
    check_contract("conv2d", p.dt);
    const conv_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, false);
    if (i32_may_overflow(p.dt, e, double(s.k())))
      throw error("ic/g*kh*kw=" + std::to_string(s.k()) + " can overflow the i32 accumulator");
  }

  std::vector<operand> inputs(const problem& p) const override {
    const conv_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, false);
    const dims src{s.mb, s.ic, s.ih, s.iw}, wei{s.oc, s.icg(), s.kh, s.kw}, dst{s.mb, s.oc, s.oh, s.ow};
    auto lay = [&](const dims& d) { return s.nhwc ? channels_last(d) : layout{}; };
    std::vector<operand> ops{{"src", p.dt.src, src, lay(src)}, {"weights", p.dt.wei, wei, lay(wei)}};
    if (e.has_bias) ops.push_back({"bias", aux_type(p.dt), {s.oc}, {}});
    if (e.has_residual) ops.push_back({"residual", aux_type(p.dt), dst, lay(dst)});
    if (e.per_channel) ops.push_back({"scale_b", dtype::f32, {s.oc}, {}});
    return ops;
  }

  std::vector<operand> outputs(const problem& p) const override {
    const conv_shape s = read_shape(p);
    const dims dst{s.mb, s.oc, s.oh, s.ow};
    return {{"dst", p.dt.dst, dst, s.nhwc ? channels_last(dst) : layout{}}};
  }

  op_counts counts(const problem& p) const override {
    const conv_shape s = read_shape(p);
    return gemm_counts(*this, p, 2.0 * double(s.mb * s.oc * s.oh * s.ow) * double(s.k()));
  }

  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override {
    const epilogue_spec e = read_epilogue(p, false);
    return fill_gemm(p, e, read_shape(p).k(), roles_of(e, in.size()), seed, in);
  }

  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const conv_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, false);
    std::vector<double> y = exact_dots(s, e, in[0], in[1], false);
    epilogue_reference_all(p.dt, e, reader_of(s, e, in), y);
    out[0].assign(y);
  }

  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const conv_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, false);
    // The GEMM is weights x col, so the weights' zero point is the first operand's.
    epilogue_spec swapped = e;
    std::swap(swapped.zp_a, swapped.zp_b);
    const std::vector<double> x = in[0].to_vector(), w = in[1].to_vector();
    std::vector<double> acc(s.mb * s.oc * s.oh * s.ow);
    const std::int64_t ohw = s.oh * s.ow;
    for_each_gemm(s, [&](std::int64_t n, std::int64_t gi, std::int64_t wo, std::int64_t oo) {
      const std::vector<double> col = im2col(s, x, n, gi, double(e.zp_a));
      simulate_dot(p.dt, swapped, s.ocg(), ohw, s.k(), std::span(w).subspan(wo, s.ocg() * s.k()), col,
                   std::span(acc).subspan(oo, s.ocg() * ohw));
    });
    epilogue_simulate_all(p.dt, e, reader_of(s, e, in), acc);
    out[0].assign(acc, p.dt.dst_round);
  }

  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override {
    const conv_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, false);
    return {gemm_bound(p, e, double(s.k()), {s.mb, s.oc, s.oh, s.ow}, f, o, reader_of(s, e, in),
                       [&](bool absolute) { return exact_dots(s, e, in[0], in[1], absolute); })};
  }

  std::vector<std::string> suite(std::string_view tag) const override { return conv2d_suite(tag); }

 private:
  attr_schema schema_ = common_gemm::schema_with_epilogue({
      int_attr("mb", 1, "minibatch", 1),
      int_attr("ic", 1, "input channels", 1),
      int_attr("oc", 1, "output channels", 1),
      int_attr("ih", 1, "input height", 1),
      int_attr("iw", 1, "input width", 1),
      int_attr("kh", 1, "kernel height", 1),
      int_attr("kw", 1, "kernel width", 1),
      int_attr("sh", 1, "stride along h", 1),
      int_attr("sw", 1, "stride along w", 1),
      int_attr("pt", 0, "padding at the top", 0),
      int_attr("pb", 0, "padding at the bottom", 0),
      int_attr("pl", 0, "padding at the left", 0),
      int_attr("pr", 0, "padding at the right", 0),
      int_attr("dh", 1, "dilation along h (1 = dense)", 1),
      int_attr("dw", 1, "dilation along w (1 = dense)", 1),
      int_attr("g", 1, "groups (g = ic = oc: depthwise)", 1),
      choice_attr("layout", "nchw", {"nchw", "nhwc"}, "memory layout of src, dst, residual (weights oihw / ohwi)"),
  }, false);
};

}  // namespace

OPVAL_REGISTER_OP(conv2d_spec);

}  // namespace opval::ops::conv2d
