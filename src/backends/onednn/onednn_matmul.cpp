// oneDNN matmul with its fused post-ops.
#include <optional>
#include <string>

#include "backends/onednn/onednn_plan.hpp"
#include "opval/error.hpp"

namespace opval::onednn {
namespace {

using ops::common_gemm::activation;
using ops::common_gemm::epilogue_spec;

std::string unimplemented_feature(const epilogue_spec& e) {
  if (e.per_channel) return "scale_b_mode=per_channel";
  if (e.scale_a != 1.0 || e.scale_b != 1.0) return "dequantization scales (scale_a / scale_b)";
  if (e.zp_a != 0 || e.zp_b != 0) return "zero points (zp_a / zp_b)";
  if (e.scale_dst != 1.0 || e.zp_dst != 0) return "output quantization (scale_dst / zp_dst)";
  return {};
}

}  // namespace

// matmul: dst = act(alpha * A.B + beta * C + bias) + residual as oneDNN's
//   output scale alpha, bias, sum post-op (scale beta, C copied into dst), eltwise post-op,
//   binary add post-op (residual). oneDNN computes dst = post_ops(alpha * (A.B + bias)).
plan matmul_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                 const dnnl::engine& eng) {
  require_f32_acc_contract(p);
  const epilogue_spec e = ops::common_gemm::read_epilogue(p, true);
  if (const std::string f = unimplemented_feature(e); !f.empty())
    throw refusal{support::unimplemented("onednn backend: matmul with " + f + " not implemented yet")};
  // oneDNN 2.6 matmul applies output scales after the bias, alpha * (A.B + bias); the
  // contract scales only the product.
  if (e.alpha != 1.0 && e.has_bias)
    throw refusal{support::unimplemented("onednn backend: matmul with alpha != 1 and bias=true: oneDNN 2.6 computes "
                                         "alpha * (A.B + bias), the contract alpha * A.B + bias")};
  if (e.beta != 0.0 && in[2].type != out[0].type)
    throw refusal{support::unimplemented("onednn backend: beta != 0 with C stored as " +
                                         std::string(to_string(in[2].type)) + " and dst as " +
                                         std::string(to_string(out[0].type)) + " (the sum post-op reads C from dst)")};
  const std::size_t rank = out[0].shape.size();
  plan pl;
  std::size_t next = 2;
  std::optional<std::size_t> c_index, bias_index, residual_index;
  if (e.beta != 0.0) c_index = next++;
  if (e.has_bias) bias_index = next++;
  if (e.has_residual) residual_index = next++;

  dnnl::primitive_attr attr = strict_attr();
  if (e.alpha != 1.0) attr.set_output_scales(0, {static_cast<float>(e.alpha)});
  dnnl::post_ops po;
  if (c_index) po.append_sum(static_cast<float>(e.beta));
  if (e.act != activation::none) po.append_eltwise(1.0f, eltwise_algorithm(e.act), e.act == activation::silu ? 1.0f : 0.0f, 0.0f);
  if (residual_index) {
    const auto md = md_of(in[*residual_index], rank);
    po.append_binary(dnnl::algorithm::binary_add, md);
    pl.args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(po.len() - 1) | DNNL_ARG_SRC_1, false, *residual_index, md});
  }
  attr.set_post_ops(po);

  const auto a = md_of(in[0], rank), b = md_of(in[1], rank), d = md_of(out[0], rank);
  dnnl::memory::desc bias;
  if (bias_index) bias = md_of(in[*bias_index], rank);  // [n] padded to 1 x ... x 1 x n
  const dnnl::matmul::desc desc = bias_index ? dnnl::matmul::desc(a, b, bias, d) : dnnl::matmul::desc(a, b, d);
  pl.pd = dnnl::matmul::primitive_desc(desc, attr, eng);
  pl.args.push_back({DNNL_ARG_SRC, false, 0, a});
  pl.args.push_back({DNNL_ARG_WEIGHTS, false, 1, b});
  if (bias_index) pl.args.push_back({DNNL_ARG_BIAS, false, *bias_index, bias});
  pl.args.push_back({DNNL_ARG_DST, true, 0, d});
  pl.copy_to_dst = c_index;
  return pl;
}

}  // namespace opval::onednn
