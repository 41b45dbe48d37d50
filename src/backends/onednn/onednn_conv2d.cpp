// oneDNN convolution_forward for conv2d: direct (operands in their own layouts) and winograd
// (operands in the layouts the primitive picks, reordered by the backend).
#include <string>

#include "backends/onednn/onednn_plan.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"
#include "opval/error.hpp"

namespace opval::onednn {
namespace {

using ops::conv2d::conv_shape;
using mdims = dnnl::memory::dims;

// The weights [oc, ic/g, kh, kw] with their strides; grouped weights as oneDNN's 5-D goihw
// [g, oc/g, ic/g, kh, kw], whose group stride is oc/g output channels.
dnnl::memory::desc weights_md(const conv_shape& s, const operand_view& w) {
  const dnnl::memory::desc plain = md_of(w, 4);
  if (s.g == 1) return plain;
  const mdims st = {s.ocg() * w.strides[0], w.strides[0], w.strides[1], w.strides[2], w.strides[3]};
  return dnnl::memory::desc({s.g, s.ocg(), s.icg(), s.kh, s.kw}, plain.data_type(), st);
}

// A descriptor of the same shape and type that lets the primitive pick the layout.
dnnl::memory::desc any_layout(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), md.data_type(), dnnl::memory::format_tag::any);
}

// dst = act(scales * conv(src - zp_a, weights - zp_b) + bias) + residual, requantized for an
// integer dst. `chosen_layouts` describes src, weights and dst as format any (winograd's
// blocked layouts) and stages them through reorders.
plan conv_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
               const dnnl::engine& eng, dnnl::algorithm alg, bool chosen_layouts) {
  require_gemm_contract(p);
  const ops::common_gemm::epilogue_spec e = ops::common_gemm::read_epilogue(p, false);
  const conv_shape s = ops::conv2d::read_shape(p);
  plan pl;
  const gemm_epilogue g = map_gemm_epilogue(p, e, in, 4, 1, false, pl);
  const auto src = md_of(in[0], 4), wei = weights_md(s, in[1]), dst = md_of(out[0], 4);
  const auto pick = [&](const dnnl::memory::desc& md) { return chosen_layouts ? any_layout(md) : md; };
  const mdims strides{s.sh, s.sw}, dilates{s.dh - 1, s.dw - 1}, pad_l{s.pt, s.pl}, pad_r{s.pb, s.pr};
  const auto kind = dnnl::prop_kind::forward_inference;
  dnnl::memory::desc bias;
  const auto bias_index = static_cast<std::size_t>(ops::common_gemm::slots_of(e).bias);
  if (g.native_bias) bias = md_of(in[bias_index], 1);
  const auto desc = g.native_bias ? dnnl::convolution_forward::desc(kind, alg, pick(src), pick(wei), bias, pick(dst),
                                                                    strides, dilates, pad_l, pad_r)
                                  : dnnl::convolution_forward::desc(kind, alg, pick(src), pick(wei), pick(dst),
                                                                    strides, dilates, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc pd(desc, g.attr, eng);
  pl.pd = pd;
  const auto bind = [&](int arg, bool output, std::size_t index, const dnnl::memory::desc& user,
                        const dnnl::memory::desc& chosen) {
    pl.args.push_back({arg, output, index, chosen, chosen != user, user});
  };
  bind(DNNL_ARG_SRC, false, 0, src, pd.src_desc());
  bind(DNNL_ARG_WEIGHTS, false, 1, wei, pd.weights_desc());
  if (g.native_bias) bind(DNNL_ARG_BIAS, false, bias_index, bias, pd.bias_desc());
  bind(DNNL_ARG_DST, true, 0, dst, pd.dst_desc());
  return pl;
}

}  // namespace

plan conv2d_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                 const dnnl::engine& eng) {
  return conv_plan(p, in, out, eng, dnnl::algorithm::convolution_direct, false);
}

// oneDNN's winograd kernels exist for few shapes (3x3, stride 1, undilated, ...) and ISAs:
// anything else is the library's refusal, in its own words.
plan conv2d_winograd_plan(const problem& p, const std::vector<operand_view>& in,
                          const std::vector<operand_view>& out, const dnnl::engine& eng) {
  try {
    return conv_plan(p, in, out, eng, dnnl::algorithm::convolution_winograd, true);
  } catch (const dnnl::error& err) {
    throw refusal{support::skipped("oneDNN convolution_winograd: " + std::string(err.what()))};
  }
}

}  // namespace opval::onednn
