// The conv2d op spec: im2col + the shared GEMM machinery of common_gemm. This file: schema,
// geometry, validation, operands, counts, fill and registration; the fp64 reference, im2col
// and the contract-exact simulation are in reference.cpp, the bound in bound.cpp, the
// suites in suite.cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"
#include "opval/attr.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/tensor.hpp"

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

namespace {

// Strides of a logical NCHW (or OIHW) tensor stored channels-last.
layout channels_last(const dims& shape) {
  layout lay;
  lay.strides = channels_last_strides(shape);
  return lay;
}

}  // namespace

conv2d_spec::conv2d_spec()
    : schema_(common_gemm::schema_with_epilogue({
          int_attr("mb", 1, "minibatch", 0),
          int_attr("ic", 1, "input channels", 1),
          int_attr("oc", 1, "output channels", 0),
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
      }, false)) {}

std::string_view conv2d_spec::name() const { return "conv2d"; }

std::string_view conv2d_spec::summary() const {
  return "2-D convolution (NCHW/NHWC, stride, asymmetric padding, dilation, groups) with bias, activation, residual; float, fp8, int8";
}

const attr_schema& conv2d_spec::schema() const { return schema_; }

std::vector<std::string> conv2d_spec::contracts() const { return gemm_contracts(); }

void conv2d_spec::validate(const problem& p) const {
  check_contract("conv2d", p.dt);
  const conv_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, false);
  if (i32_may_overflow(p.dt, e, double(s.k())))
    throw error("ic/g*kh*kw=" + std::to_string(s.k()) + " can overflow the i32 accumulator");
}

std::vector<operand> conv2d_spec::inputs(const problem& p) const {
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

std::vector<operand> conv2d_spec::outputs(const problem& p) const {
  const conv_shape s = read_shape(p);
  const dims dst{s.mb, s.oc, s.oh, s.ow};
  return {{"dst", p.dt.dst, dst, s.nhwc ? channels_last(dst) : layout{}}};
}

op_counts conv2d_spec::counts(const problem& p) const {
  const conv_shape s = read_shape(p);
  return gemm_counts(*this, p, 2.0 * double(s.mb * s.oc * s.oh * s.ow) * double(s.k()));
}

fill_traits conv2d_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  const epilogue_spec e = read_epilogue(p, false);
  return fill_gemm(p, e, read_shape(p).k(), roles_of(e, in.size()), seed, in);
}

OPVAL_REGISTER_OP(conv2d_spec);

}  // namespace opval::ops::conv2d
