// Shared pieces of the oneDNN backend: operand descriptions and contract checks.
#include <algorithm>
#include <cstdint>

#include "backends/onednn/onednn_plan.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/error.hpp"

namespace opval::onednn {

using ops::common_gemm::activation;
using ops::common_gemm::epilogue_spec;

operand_view view_of(const operand& o) {
  return {o.type, o.shape, o.lay.strides.empty() ? row_major_strides(o.shape) : o.lay.strides};
}
operand_view view_of(const tensor& t) { return {t.type(), t.shape(), t.strides()}; }

std::optional<tag_dt> dnnl_type(dtype t) {
  switch (t) {
    case dtype::f32: return tag_dt::f32;
    case dtype::bf16: return tag_dt::bf16;
    case dtype::f16: return tag_dt::f16;
    case dtype::u8: return tag_dt::u8;
    case dtype::i8: return tag_dt::s8;
    case dtype::i32: return tag_dt::s32;
    default: return std::nullopt;
  }
}

// A padded dimension's stride is
// the span of the whole tensor, which keeps the descriptor's strides plausible for oneDNN.
dnnl::memory::desc md_of(const operand_view& v, std::size_t rank) {
  rank = std::max<std::size_t>({rank, v.shape.size(), 1});
  const std::size_t pad = rank - v.shape.size();
  std::int64_t span = 1;
  for (std::size_t d = 0; d < v.shape.size(); ++d) span = std::max(span, v.shape[d] * v.strides[d]);
  dnnl::memory::dims shape(rank, 1), strides(rank, span);
  for (std::size_t d = 0; d < v.shape.size(); ++d) shape[pad + d] = v.shape[d], strides[pad + d] = v.strides[d];
  const auto t = dnnl_type(v.type);
  if (!t) throw error("onednn: operand type " + std::string(to_string(v.type)) + " has no oneDNN data type");
  return dnnl::memory::desc(shape, *t, strides);
}

dnnl::primitive_attr strict_attr() {
  dnnl::primitive_attr a;
  a.set_fpmath_mode(dnnl::fpmath_mode::strict);
  return a;
}

bool plain_rounding(const contract& c) {
  return c.in_round == rounding::rne && c.acc_round == rounding::rne && c.dst_round == rounding::rne &&
         c.denorm == denormals::ieee;
}

// oneDNN's CPU kernels accumulate floats in f32.
void require_f32_acc_contract(const problem& p) {
  const contract& c = p.dt;
  const bool types = dnnl_type(c.src) && dnnl_type(c.wei) && dnnl_type(c.dst) && c.math == c.src;
  if (!types || c.acc != dtype::f32 || !plain_rounding(c))
    throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " " + c.to_string() +
                                         " is not a contract oneDNN's CPU primitives compute (they take "
                                         "f32/bf16/f16 operands, accumulate in f32 and round to nearest)")};
}

dnnl::algorithm eltwise_algorithm(activation a) {
  switch (a) {
    case activation::relu: return dnnl::algorithm::eltwise_relu;
    case activation::gelu: return dnnl::algorithm::eltwise_gelu_erf;
    case activation::gelu_tanh: return dnnl::algorithm::eltwise_gelu_tanh;
    case activation::silu: return dnnl::algorithm::eltwise_swish;  // x * sigmoid(alpha x), alpha 1
    case activation::none: break;
  }
  throw error("onednn: no eltwise algorithm for activation none");
}

// oneDNN's int8 kernels sum u8/s8 x s8 products exactly in s32 and run the epilogue in f32.
void require_gemm_contract(const problem& p) {
  const contract& c = p.dt;
  if (is_float(c.acc)) return require_f32_acc_contract(p);
  const bool src = c.src == dtype::u8 || c.src == dtype::i8;
  const bool dst = c.dst == dtype::f32 || c.dst == dtype::bf16 || c.dst == dtype::i8 || c.dst == dtype::u8 ||
                   c.dst == dtype::i32;
  if (!src || c.wei != dtype::i8 || c.acc != dtype::i32 || !dst || !plain_rounding(c))
    throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " " + c.to_string() +
                                         " is not an int8 contract oneDNN computes (u8/i8 x i8, i32 "
                                         "accumulation, f32/bf16/i8/u8/i32 dst, round to nearest)")};
}

dnnl::memory::desc channel_md(const operand_view& v, std::size_t rank, int channel_dim) {
  const auto t = dnnl_type(v.type);
  if (!t) throw error("onednn: operand type " + std::string(to_string(v.type)) + " has no oneDNN data type");
  dnnl::memory::dims shape(rank, 1);
  shape[static_cast<std::size_t>(channel_dim)] = v.shape.at(0);
  const dims strides = row_major_strides(dims(shape.begin(), shape.end()));
  return dnnl::memory::desc(shape, *t, dnnl::memory::dims(strides.begin(), strides.end()));
}

gemm_epilogue map_gemm_epilogue(const problem& p, const epilogue_spec& e, const std::vector<operand_view>& in,
                                std::size_t rank, int channel_dim, bool runtime_scales, plan& pl) {
  const ops::common_gemm::operand_slots sl = ops::common_gemm::slots_of(e);
  if (sl.c >= 0 && in[static_cast<std::size_t>(sl.c)].type != p.dt.dst)
    throw refusal{support::unimplemented("onednn backend: beta != 0 with C stored as " +
                                         std::string(to_string(in[static_cast<std::size_t>(sl.c)].type)) +
                                         " and dst as " + std::string(to_string(p.dt.dst)) +
                                         " (the sum post-op reads C from dst)")};
  gemm_epilogue g;
  g.attr = strict_attr();
  dnnl::post_ops po;
  const auto binary = [&](dnnl::algorithm alg, std::size_t idx, const dnnl::memory::desc& md) {
    po.append_binary(alg, md);
    pl.args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(po.len() - 1) | DNNL_ARG_SRC_1, false, idx, md});
  };
  // Per tensor, the whole factor is one scaling, computed in double and rounded once: an
  // output scale where the primitive takes one, else a leading linear post-op (oneDNN 2.6's
  // float convolutions take no output scales). Per channel, the scale_b operand is a run-time
  // output scale (matmul) or a binary mul post-op (convolution scales are fixed at creation).
  const double common = e.per_channel ? e.alpha * e.scale_a : dequant_factor(e, e.scale_b);
  const auto scale_index = static_cast<std::size_t>(sl.scale);
  const bool runtime_channel = e.per_channel && runtime_scales;
  if (runtime_channel) {
    g.attr.set_output_scales(1 << channel_dim, {DNNL_RUNTIME_F32_VAL});
    const dnnl::memory::desc md({in[scale_index].shape.at(0)}, tag_dt::f32, dnnl::memory::format_tag::x);
    pl.args.push_back({DNNL_ARG_ATTR_OUTPUT_SCALES, false, scale_index, md});
  }
  if (common != 1.0) {
    if (!runtime_channel && (runtime_scales || e.integer_acc)) g.attr.set_output_scales(0, {static_cast<float>(common)});
    else po.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, static_cast<float>(common), 0.0f);
  }
  if (e.per_channel && !runtime_scales)
    binary(dnnl::algorithm::binary_mul, scale_index, channel_md(in[scale_index], rank, channel_dim));
  // oneDNN 2.6 adds its own bias before the output scale: scale * (A.B + bias).
  g.native_bias = e.has_bias && !e.per_channel && common == 1.0;
  const auto zero_point = [&](int arg, std::int64_t zp) {
    if (zp == 0) return;
    g.attr.set_zero_points(arg, 0, {DNNL_RUNTIME_S32_VAL});
    pl.owned_s32.push_back({DNNL_ARG_ATTR_ZERO_POINTS | arg, {static_cast<std::int32_t>(zp)}});
  };
  zero_point(DNNL_ARG_SRC, e.zp_a);
  zero_point(DNNL_ARG_WEIGHTS, e.zp_b);
  zero_point(DNNL_ARG_DST, e.zp_dst);
  if (sl.c >= 0) {
    po.append_sum(static_cast<float>(e.beta));
    pl.copy_to_dst = static_cast<std::size_t>(sl.c);
  }
  if (e.has_bias && !g.native_bias) {
    const auto idx = static_cast<std::size_t>(sl.bias);
    binary(dnnl::algorithm::binary_add, idx, channel_md(in[idx], rank, channel_dim));
  }
  if (e.act != activation::none)
    po.append_eltwise(1.0f, eltwise_algorithm(e.act), e.act == activation::silu ? 1.0f : 0.0f, 0.0f);
  if (sl.residual >= 0) {
    const auto idx = static_cast<std::size_t>(sl.residual);
    binary(dnnl::algorithm::binary_add, idx, md_of(in[idx], rank));
  }
  if (e.scale_dst != 1.0)
    po.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, static_cast<float>(1.0 / e.scale_dst), 0.0f);
  g.attr.set_post_ops(po);
  return g;
}

}  // namespace opval::onednn
