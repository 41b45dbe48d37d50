// oneDNN reduction (sum / mean / max over a set of axes).
// oneDNN's dst has src's rank with extent 1 on the reduced axes: keepdims=0 is the same
// output memory described with those unit dims put back.
#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/onednn/onednn_plan.hpp"
#include "opval/error.hpp"

namespace opval::onednn {
namespace {

// The reduced axes of p, normalized to [0, rank) (the op has validated them).
std::vector<bool> reduced_axes(const problem& p, std::size_t rank) {
  std::vector<bool> reduced(rank, false);
  for (std::int64_t a : p.get_dims("axes")) reduced[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(rank) : a)] = true;
  return reduced;
}

// The output y (shape without the reduced axes, or with them as 1 when keepdims) seen with
// src's rank: the unit dims take the stride that the dims inside them span (any stride is
// valid for an extent of 1; this one keeps the descriptor dense).
operand_view keepdims_view(const operand_view& y, const std::vector<bool>& reduced, bool keepdims) {
  if (keepdims) return y;
  operand_view v{y.type, dims(reduced.size(), 1), dims(reduced.size(), 1)};
  std::int64_t inner_span = 1;
  std::size_t kept = y.shape.size();
  for (std::size_t d = reduced.size(); d-- > 0;) {
    if (!reduced[d]) {
      --kept;
      v.shape[d] = y.shape[kept];
      v.strides[d] = y.strides[kept];
      inner_span = std::max(inner_span, y.shape[kept] * y.strides[kept]);
    } else {
      v.strides[d] = inner_span;
    }
  }
  return v;
}

dnnl::algorithm reduction_algorithm(const std::string& kind) {
  if (kind == "sum") return dnnl::algorithm::reduction_sum;
  if (kind == "mean") return dnnl::algorithm::reduction_mean;
  return dnnl::algorithm::reduction_max;
}

}  // namespace

// reduce: one reduction primitive, src and dst of equal rank.
plan reduce_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                 const dnnl::engine& eng) {
  require_f32_acc_contract(p);
  const operand_view& x = in[0];
  const std::vector<bool> reduced = reduced_axes(p, x.shape.size());
  bool reduces = false;
  for (std::size_t d = 0; d < reduced.size(); ++d) reduces = reduces || (reduced[d] && x.shape[d] != 1);
  if (!reduces)
    throw refusal{support::unimplemented("onednn backend: reduce over axes of extent 1 only (y is x): oneDNN 2.6's "
                                         "reduction descriptor requires src and dst to differ in some dim")};
  bool over_nothing = false;
  for (std::size_t d = 0; d < reduced.size(); ++d) over_nothing = over_nothing || (reduced[d] && x.shape[d] == 0);
  if (over_nothing && p.get_choice("kind") == "max")
    throw refusal{support::unimplemented("onednn backend: a max over an empty axis: oneDNN 2.6 gives the lowest finite "
                                         "value where opval's reduce (as ONNX's ReduceMax) defines -inf")};
  const operand_view y = keepdims_view(out[0], reduced, p.get_bool("keepdims"));
  const auto src = md_of(x, x.shape.size()), dst = md_of(y, x.shape.size());
  const dnnl::reduction::desc desc(reduction_algorithm(p.get_choice("kind")), src, dst, 0.0f, 0.0f);
  plan pl;
  pl.pd = dnnl::reduction::primitive_desc(desc, strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC, false, 0, src}, {DNNL_ARG_DST, true, 0, dst}};
  return pl;
}

}  // namespace opval::onednn
