// oneDNN softmax_v2 (softmax / log_softmax), eltwise (relu / gelu / silu) and binary
// (add / mul) primitives.
#include <algorithm>
#include <string>

#include "backends/onednn/onednn_plan.hpp"
#include "opval/error.hpp"

namespace opval::onednn {
namespace {

using ops::common_gemm::activation;

// softmax / log_softmax over `axis`: softmax_v2, which takes distinct src and dst types.
plan softmax_with(dnnl::algorithm alg, const problem& p, const std::vector<operand_view>& in,
                  const std::vector<operand_view>& out, const dnnl::engine& eng) {
  require_f32_acc_contract(p);
  const std::size_t rank = in[0].shape.size();
  const auto x = md_of(in[0], rank), y = md_of(out[0], rank);
  std::int64_t axis = p.get_int("axis");
  if (axis < 0) axis += static_cast<std::int64_t>(rank);
  const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, x, y, static_cast<int>(axis));
  plan pl;
  pl.pd = dnnl::softmax_v2_forward::primitive_desc(desc, strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC, false, 0, x}, {DNNL_ARG_DST, true, 0, y}};
  return pl;
}

// relu / gelu / silu. oneDNN 2.6's eltwise writes dst in src's layout and type, so a strided
// x or a type-changing contract is refused rather than copied.
plan eltwise_with(activation act, const problem& p, const std::vector<operand_view>& in,
                  const std::vector<operand_view>& out, const dnnl::engine& eng) {
  require_f32_acc_contract(p);
  if (in[0].type != out[0].type)
    throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " " + p.dt.to_string() +
                                         ": oneDNN 2.6 eltwise writes dst in the type of src")};
  if (in[0].strides != out[0].strides)
    throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " on strided x (stride_pad/step): "
                                         "oneDNN 2.6 eltwise writes dst in the layout of src, opval's y is contiguous")};
  const auto x = md_of(in[0], in[0].shape.size());
  const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, eltwise_algorithm(act), x,
                                         act == activation::silu ? 1.0f : 0.0f, 0.0f);
  plan pl;
  pl.pd = dnnl::eltwise_forward::primitive_desc(desc, strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC, false, 0, x}, {DNNL_ARG_DST, true, 0, md_of(out[0], out[0].shape.size())}};
  return pl;
}

// add / mul with NumPy broadcasting. oneDNN 2.6 broadcasts src1 only, so when a is the
// broadcast operand the (commutative) operands swap; when both broadcast it is refused.
plan binary_with(dnnl::algorithm alg, const problem& p, const std::vector<operand_view>& in,
                 const std::vector<operand_view>& out, const dnnl::engine& eng) {
  require_f32_acc_contract(p);
  const std::size_t rank = std::max<std::size_t>(out[0].shape.size(), 1);
  const auto full = [&](const operand_view& v) { return md_of(v, rank).dims() == md_of(out[0], rank).dims(); };
  std::size_t first = 0;
  if (!full(in[0])) {
    if (!full(in[1]))
      throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " with both a and b broadcast "
                                           "(oneDNN 2.6 binary broadcasts src1 only)")};
    first = 1;
  }
  const auto s0 = md_of(in[first], rank), s1 = md_of(in[1 - first], rank), d = md_of(out[0], rank);
  plan pl;
  pl.pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg, s0, s1, d), strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC_0, false, first, s0}, {DNNL_ARG_SRC_1, false, 1 - first, s1}, {DNNL_ARG_DST, true, 0, d}};
  return pl;
}

}  // namespace

plan_builder softmax_plan(dnnl::algorithm alg) {
  return [alg](const problem& p, const auto& in, const auto& out, const dnnl::engine& eng) {
    return softmax_with(alg, p, in, out, eng);
  };
}

plan_builder eltwise_plan(activation (*of)(const problem&)) {
  return [of](const problem& p, const auto& in, const auto& out, const dnnl::engine& eng) {
    return eltwise_with(of(p), p, in, out, eng);
  };
}

plan_builder binary_plan(dnnl::algorithm alg) {
  return [alg](const problem& p, const auto& in, const auto& out, const dnnl::engine& eng) {
    return binary_with(alg, p, in, out, eng);
  };
}

}  // namespace opval::onednn
