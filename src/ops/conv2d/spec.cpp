// The conv2d op spec: im2col + the shared GEMM machinery of common_gemm.
#include <algorithm>
#include <cmath>
#include <limits>

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

struct operand_slots {
  int bias = -1, residual = -1, scale = -1;
};

operand_slots slots_of(const epilogue_spec& e) {
  operand_slots s;
  int next = 2;
  if (e.has_bias) s.bias = next++;
  if (e.has_residual) s.residual = next++;
  if (e.per_channel) s.scale = next++;
  return s;
}

double max_centered(dtype t, std::int64_t zp) {
  return std::max(std::abs(traits(t).lowest - double(zp)), std::abs(traits(t).max - double(zp)));
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
  auto x = centered(src.to_vector(), e.zp_a), w = centered(wei.to_vector(), e.zp_b);
  if (absolute) {
    for (double& v : x) v = std::abs(v);
    for (double& v : w) v = std::abs(v);
  }
  std::vector<double> out(s.mb * s.oc * s.oh * s.ow);
  for_each_gemm(s, [&](std::int64_t n, std::int64_t gi, std::int64_t wo, std::int64_t oo) {
    const std::vector<double> col = im2col(s, x, n, gi, 0.0);
    reference_gemm(s.ocg(), s.oh * s.ow, s.k(), w.data() + wo, col.data(), out.data() + oo);
  });
  return out;
}

struct epilogue_reader {
  const epilogue_spec& e;
  std::int64_t ohw, oc;
  std::vector<double> bias, residual, scale;

  epilogue_reader(const epilogue_spec& spec, const conv_shape& s, std::span<const tensor> in)
      : e(spec), ohw(s.oh * s.ow), oc(s.oc) {
    const operand_slots sl = slots_of(spec);
    if (sl.bias >= 0) bias = in[sl.bias].to_vector();
    if (sl.residual >= 0) residual = in[sl.residual].to_vector();
    if (sl.scale >= 0) scale = in[sl.scale].to_vector();
  }
  epilogue_inputs at(std::int64_t linear) const {
    const std::int64_t ch = (linear / ohw) % oc;
    epilogue_inputs v;
    v.scale_b = scale.empty() ? e.scale_b : scale[ch];
    if (!bias.empty()) v.bias = bias[ch];
    if (!residual.empty()) v.residual = residual[linear];
    return v;
  }
};

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
    if (e.integer_acc && double(s.k()) * max_centered(p.dt.src, e.zp_a) * max_centered(p.dt.wei, e.zp_b) > 2147483647.0)
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
    op_counts c;
    c.flops = 2.0 * double(s.mb * s.oc * s.oh * s.ow) * double(s.k());
    for (const auto& list : {inputs(p), outputs(p)})
      for (const auto& o : list) c.bytes += double(element_count(o.shape)) * traits(o.type).size_bytes;
    return c;
  }

  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override {
    const epilogue_spec e = read_epilogue(p, false);
    const operand_slots sl = slots_of(e);
    std::vector<operand_role> roles(in.size(), operand_role::a);
    roles[1] = operand_role::b;
    if (sl.bias >= 0) roles[sl.bias] = operand_role::bias;
    if (sl.residual >= 0) roles[sl.residual] = operand_role::residual;
    if (sl.scale >= 0) roles[sl.scale] = operand_role::scale;
    return fill_gemm(p, e, read_shape(p).k(), roles, seed, in);
  }

  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const conv_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, false);
    std::vector<double> y = exact_dots(s, e, in[0], in[1], false);
    const epilogue_reader rd(e, s, in);
#pragma omp parallel for schedule(static) if (y.size() > 4096)
    for (std::int64_t i = 0; i < std::int64_t(y.size()); ++i) y[i] = epilogue_reference(e, y[i], rd.at(i));
    if (e.integer_dst)
      for (double& v : y) v = std::clamp(v, traits(p.dt.dst).lowest, traits(p.dt.dst).max);
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
    const epilogue_reader rd(e, s, in);
#pragma omp parallel for schedule(static) if (acc.size() > 4096)
    for (std::int64_t i = 0; i < std::int64_t(acc.size()); ++i) acc[i] = epilogue_simulate(p.dt, e, acc[i], rd.at(i));
    out[0].assign(acc, p.dt.dst_round);
  }

  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override {
    const conv_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, false);
    const gemm_error_model model = make_error_model(p, e, double(s.k()), double(s.mb * s.oc * s.oh * s.ow), f, o);
    const std::vector<double> dots = exact_dots(s, e, in[0], in[1], false);
    const std::vector<double> abs_dots = e.integer_acc ? dots : exact_dots(s, e, in[0], in[1], true);
    const epilogue_reader rd(e, s, in);
    std::vector<double> b(dots.size());
#pragma omp parallel for schedule(static) if (b.size() > 4096)
    for (std::int64_t i = 0; i < std::int64_t(b.size()); ++i) {
      const double v = epilogue_error(e, model.k, abs_dots[i], dots[i], rd.at(i));
      b[i] = std::isfinite(v) ? v : std::numeric_limits<double>::infinity();
    }
    error_bound eb;
    eb.compute = make_f64({s.mb, s.oc, s.oh, s.ow}, b);
    eb.formula = epilogue_formula(e, model.k, model.g.formula);
    eb.meaningful = model.g.meaningful;
    eb.why_not = model.g.why_not;
    return {eb};
  }

  std::vector<std::string> suite(std::string_view tag) const override { return conv2d_suite(tag); }

 private:
  attr_schema schema_{
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
      alpha_attr(),
      bias_attr(),
      act_attr(),
      residual_attr(),
      scale_a_attr(),
      scale_b_attr(),
      scale_b_mode_attr(),
      zp_a_attr(),
      zp_b_attr(),
      scale_dst_attr(),
      zp_dst_attr(),
  };
};

}  // namespace

OPVAL_REGISTER_OP(conv2d_spec);

}  // namespace opval::ops::conv2d
