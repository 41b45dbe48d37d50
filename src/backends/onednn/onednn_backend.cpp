// The `onednn` backend: oneDNN CPU primitives for matmul (with its fused post-ops), softmax /
// log_softmax, the activations relu / gelu / silu and the binary add / mul. Every operand is
// described to oneDNN by its own strides (transposes, padded leading dimensions, broadcast
// batches, strided inputs), so the library's layout handling is what gets tested: no copies on
// our side, except C, which the sum post-op reads from dst. Math mode is pinned to
// fpmath strict: a contract oneDNN would compute in reduced precision is not run as f32.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "opval/backend.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval {
namespace {

using ops::common_gemm::activation;
using ops::common_gemm::epilogue_spec;
using tag_dt = dnnl::memory::data_type;

// What oneDNN needs of an operand: type, logical shape and element strides. Built from the
// op's operand descriptions (capability queries) or from the tensors themselves (execution),
// so both describe the same primitive.
struct operand_view {
  dtype type = dtype::f32;
  dims shape;
  dims strides;
};

operand_view view_of(const operand& o) {
  return {o.type, o.shape, o.lay.strides.empty() ? row_major_strides(o.shape) : o.lay.strides};
}
operand_view view_of(const tensor& t) { return {t.type(), t.shape(), t.strides()}; }

std::optional<tag_dt> dnnl_type(dtype t) {
  switch (t) {
    case dtype::f32: return tag_dt::f32;
    case dtype::bf16: return tag_dt::bf16;
    case dtype::f16: return tag_dt::f16;
    default: return std::nullopt;
  }
}

// The memory descriptor of v with leading extents of 1 added up to `rank` (oneDNN broadcasts
// only between equal ranks; rank 0 becomes a single element). A padded dimension's stride is
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

// Which tensor feeds a primitive argument: input or output `index`, described by `md`.
struct binding {
  int arg = 0;
  bool output = false;
  std::size_t index = 0;
  dnnl::memory::desc md;
};

// A primitive ready to create, with its arguments. `copy_to_dst` names the input (C) that
// the sum post-op expects to find in dst before the primitive runs.
struct plan {
  dnnl::primitive_desc pd;
  std::vector<binding> args;
  std::optional<std::size_t> copy_to_dst;
};

// A refusal decided before oneDNN is asked: it carries the support verdict to report.
struct refusal {
  support s;
};

dnnl::primitive_attr strict_attr() {
  dnnl::primitive_attr a;
  a.set_fpmath_mode(dnnl::fpmath_mode::strict);
  return a;
}

bool plain_rounding(const contract& c) {
  return c.in_round == rounding::rne && c.acc_round == rounding::rne && c.dst_round == rounding::rne &&
         c.denorm == denormals::ieee;
}

// A float contract oneDNN computes as asked: inputs f32/bf16/f16 not rounded in-kernel, f32
// accumulation (oneDNN's CPU kernels accumulate in f32), round-to-nearest, IEEE subnormals.
void require_f32_acc_contract(const problem& p) {
  const contract& c = p.dt;
  const bool types = dnnl_type(c.src) && dnnl_type(c.wei) && dnnl_type(c.dst) && c.math == c.src;
  if (!types || c.acc != dtype::f32 || !plain_rounding(c))
    throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " " + c.to_string() +
                                         " is not a contract oneDNN's CPU primitives compute (they take "
                                         "f32/bf16/f16 operands, accumulate in f32 and round to nearest)")};
}

std::string unimplemented_feature(const epilogue_spec& e) {
  if (e.per_channel) return "scale_b_mode=per_channel";
  if (e.scale_a != 1.0 || e.scale_b != 1.0) return "dequantization scales (scale_a / scale_b)";
  if (e.zp_a != 0 || e.zp_b != 0) return "zero points (zp_a / zp_b)";
  if (e.scale_dst != 1.0 || e.zp_dst != 0) return "output quantization (scale_dst / zp_dst)";
  return {};
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

// softmax / log_softmax over `axis`: softmax_v2, which takes distinct src and dst types.
plan softmax_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                  const dnnl::engine& eng) {
  require_f32_acc_contract(p);
  const std::size_t rank = in[0].shape.size();
  const auto x = md_of(in[0], rank), y = md_of(out[0], rank);
  std::int64_t axis = p.get_int("axis");
  if (axis < 0) axis += static_cast<std::int64_t>(rank);
  const auto alg = p.op() == "log_softmax" ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
  const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, x, y, static_cast<int>(axis));
  plan pl;
  pl.pd = dnnl::softmax_v2_forward::primitive_desc(desc, strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC, false, 0, x}, {DNNL_ARG_DST, true, 0, y}};
  return pl;
}

// relu / gelu / silu. oneDNN 2.6's eltwise writes dst in src's layout and type, so a strided
// x or a type-changing contract is refused rather than copied.
plan eltwise_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                  const dnnl::engine& eng) {
  require_f32_acc_contract(p);
  if (in[0].type != out[0].type)
    throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " " + p.dt.to_string() +
                                         ": oneDNN 2.6 eltwise writes dst in the type of src")};
  if (in[0].strides != out[0].strides)
    throw refusal{support::unimplemented("onednn backend: " + std::string(p.op()) + " on strided x (stride_pad/step): "
                                         "oneDNN 2.6 eltwise writes dst in the layout of src, opval's y is contiguous")};
  activation act = activation::relu;
  if (p.op() == "gelu") act = p.get_choice("approximate") == "tanh" ? activation::gelu_tanh : activation::gelu;
  if (p.op() == "silu") act = activation::silu;
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
plan binary_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                 const dnnl::engine& eng) {
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
  const auto alg = p.op() == "mul" ? dnnl::algorithm::binary_mul : dnnl::algorithm::binary_add;
  plan pl;
  pl.pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg, s0, s1, d), strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC_0, false, first, s0}, {DNNL_ARG_SRC_1, false, 1 - first, s1}, {DNNL_ARG_DST, true, 0, d}};
  return pl;
}

using plan_builder = plan (*)(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                              const dnnl::engine&);

plan_builder builder_of(std::string_view op) {
  if (op == "matmul") return matmul_plan;
  if (op == "softmax" || op == "log_softmax") return softmax_plan;
  if (op == "relu" || op == "gelu" || op == "silu") return eltwise_plan;
  if (op == "add" || op == "mul") return binary_plan;
  return nullptr;
}

bool reduced_precision(const contract& c) {
  return c.src == dtype::bf16 || c.src == dtype::f16 || c.wei == dtype::bf16 || c.wei == dtype::f16 ||
         c.dst == dtype::bf16 || c.dst == dtype::f16;
}

// Views of operand descriptions or of tensors.
template <class Range>
std::vector<operand_view> views(const Range& xs) {
  std::vector<operand_view> v;
  for (const auto& x : xs) v.push_back(view_of(x));
  return v;
}

// Copies every logical element of src into dst (same shape and type): C into dst for the
// sum post-op. Element by element through the strides, as both may be padded.
void copy_elements(const tensor& src, tensor& dst) {
  const std::size_t bytes = src.element_size();
  const auto* s = static_cast<const std::byte*>(src.data());
  auto* d = static_cast<std::byte*>(dst.data());
  for (std::int64_t i = 0; i < src.numel(); ++i) {
    const dims idx = src.unravel(i);
    std::int64_t so = 0, doff = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) so += idx[k] * src.strides()[k], doff += idx[k] * dst.strides()[k];
    std::copy_n(s + so * static_cast<std::int64_t>(bytes), bytes, d + doff * static_cast<std::int64_t>(bytes));
  }
}

class onednn_backend final : public backend {
 public:
  onednn_backend() : eng_(dnnl::engine::kind::cpu, 0), stream_(eng_) {}

  std::string name() const override { return "onednn"; }
  std::string version() const override {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
           " (" + v->hash + ")";
  }

  support supports(const problem& p) const override {
    const plan_builder build = builder_of(p.op());
    if (!build) return support::unimplemented("onednn backend: " + std::string(p.op()) + " not implemented yet");
    const op_spec& spec = find_op(p.op());
    try {
      build(p, views(spec.inputs(p)), views(spec.outputs(p)), eng_);
      return support::yes();
    } catch (const refusal& r) {
      return r.s;
    } catch (const dnnl::error& e) {
      // oneDNN has no kernel for this type on this CPU: its own words say why.
      if (reduced_precision(p.dt)) return support::skipped("oneDNN: " + std::string(e.what()));
      return support::unimplemented("oneDNN refused " + std::string(p.op()) + ": " + e.what());
    }
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    const plan_builder build = builder_of(p.op());
    if (!build) throw error("onednn: execute called for unsupported op " + std::string(p.op()));
    plan pl;
    try {
      pl = build(p, views(in), views(out), eng_);
    } catch (const refusal& r) {
      throw error("onednn: execute called for an unsupported problem: " + r.s.reason);
    }
    if (pl.copy_to_dst) copy_elements(in[*pl.copy_to_dst], out[0]);
    std::unordered_map<int, dnnl::memory> args;
    for (const binding& b : pl.args) {
      void* ptr = b.output ? out[b.index].data() : const_cast<void*>(in[b.index].data());
      args.emplace(b.arg, dnnl::memory(b.md, eng_, ptr));
    }
    dnnl::primitive(pl.pd.get()).execute(stream_, args);
    stream_.wait();
    return {"oneDNN " + std::string(pl.pd.impl_info_str()) + " (fpmath strict)", ""};
  }

 private:
  dnnl::engine eng_;
  dnnl::stream stream_;
};

std::unique_ptr<backend> make_onednn() { return std::make_unique<onednn_backend>(); }

}  // namespace

OPVAL_REGISTER_BACKEND(onednn, make_onednn);

}  // namespace opval
