// Shared pieces of the oneDNN backend: operand descriptions and contract checks.
#include <algorithm>
#include <cstdint>

#include "backends/onednn/onednn_plan.hpp"
#include "opval/error.hpp"

namespace opval::onednn {

using ops::common_gemm::activation;

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

}  // namespace opval::onednn
