#pragma once
// What the oneDNN backend's files share: how an operand is described to oneDNN, the plan of
// one primitive with its argument bindings, and the builders, one per op family (each in
// its own file). A builder either returns a plan or throws `refusal` with the verdict to
// report; a dnnl::error from oneDNN itself means the library has no kernel for it here.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "opval/backend.hpp"
#include "opval/contract.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval::onednn {

using tag_dt = dnnl::memory::data_type;

/// What oneDNN needs of an operand: type, logical shape and element strides. Built from the
/// op's operand descriptions (capability queries) or from the tensors themselves (execution),
/// so both describe the same primitive.
struct operand_view {
  dtype type = dtype::f32;
  dims shape;
  dims strides;
};
operand_view view_of(const operand& o);
operand_view view_of(const tensor& t);

/// oneDNN's data type for t, if it has one.
std::optional<tag_dt> dnnl_type(dtype t);

/// The memory descriptor of v with leading extents of 1 added up to `rank` (oneDNN
/// broadcasts only between equal ranks; rank 0 becomes a single element).
dnnl::memory::desc md_of(const operand_view& v, std::size_t rank);

/// Which tensor feeds a primitive argument: input or output `index`, described by `md`.
/// A `staged` binding is one whose `md` is the layout the primitive chose (format any) and
/// `user_md` the tensor's own: the backend reorders inputs into a scratch memory before the
/// primitive runs and outputs out of it after.
struct binding {
  int arg = 0;
  bool output = false;
  std::size_t index = 0;
  dnnl::memory::desc md;
  bool staged = false;
  dnnl::memory::desc user_md{};
};

/// A primitive ready to create, with its arguments. `copy_to_dst` names the input (C) that
/// the sum post-op expects to find in dst before the primitive runs. `owned` are arguments
/// the plan itself holds (scales, zero points): host data that outlives the plan's memories.
struct plan {
  dnnl::primitive_desc pd;
  std::vector<binding> args;
  std::optional<std::size_t> copy_to_dst;
  std::vector<std::pair<int, std::vector<float>>> owned_f32;
  std::vector<std::pair<int, std::vector<std::int32_t>>> owned_s32;
  std::string fpmath = "strict";  ///< the fpmath mode the primitive was created with
};

/// A refusal decided before oneDNN is asked: it carries the support verdict to report.
struct refusal {
  support s;
};

/// Primitive attributes with fpmath pinned to strict: a contract oneDNN would compute in
/// reduced precision is not run as f32.
dnnl::primitive_attr strict_attr();

/// True when every rounding of c is to nearest and subnormals are IEEE.
bool plain_rounding(const contract& c);

/// Throws refusal unless p's contract is one oneDNN computes as asked: f32/bf16/f16 operands
/// not rounded in-kernel, f32 accumulation, round-to-nearest, IEEE subnormals.
void require_f32_acc_contract(const problem& p);

/// oneDNN's eltwise algorithm for an activation (not none).
dnnl::algorithm eltwise_algorithm(ops::common_gemm::activation a);

/// Throws refusal unless p's (matmul / conv2d) contract is one oneDNN computes as asked: a
/// float one (require_f32_acc_contract) or u8/i8 x i8 with exact i32 accumulation into an
/// f32, bf16, i8, u8 or i32 dst.
void require_gemm_contract(const problem& p);

/// The per-channel operand v ([channels]: bias, scales) placed at dimension `channel_dim` of
/// a rank-`rank` tensor, every other extent 1 (the shape of a per-channel binary post-op).
dnnl::memory::desc channel_md(const operand_view& v, std::size_t rank, int channel_dim);

/// The epilogue of matmul / conv2d as oneDNN attributes, in the contract's order:
///   scaling by alpha*scale_a*scale_b (an output scale; a linear post-op where the primitive
///   takes none; per channel, the scale_b operand as a run-time output scale when
///   `runtime_scales`, else a binary mul post-op), zero points of src / weights / dst
///   (run-time values owned by the plan), then post-ops sum (beta*C), binary add (bias, when
///   scales apply, since oneDNN 2.6 scales its own bias), eltwise (activation), binary add
///   (residual), linear (1/scale_dst). Adds the operands' bindings to pl.
struct gemm_epilogue {
  dnnl::primitive_attr attr;
  bool native_bias = false;  ///< the primitive's own bias argument carries the bias
};
gemm_epilogue map_gemm_epilogue(const problem& p, const ops::common_gemm::epilogue_spec& e,
                                const std::vector<operand_view>& in, std::size_t rank, int channel_dim,
                                bool runtime_scales, plan& pl);

/// Builds the plan of p for the given operand views on engine eng.
using plan_builder = std::function<plan(const problem& p, const std::vector<operand_view>& in,
                                        const std::vector<operand_view>& out, const dnnl::engine& eng)>;

plan matmul_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                 const dnnl::engine&);
plan conv2d_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                 const dnnl::engine&);
/// conv2d with algorithm::convolution_winograd: operands in the layouts the primitive picks,
/// reordered by the backend; a refusal by oneDNN is SKIPPED with its message.
plan conv2d_winograd_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                          const dnnl::engine&);
/// softmax_v2 with `alg` (softmax_accurate, softmax_log).
plan_builder softmax_plan(dnnl::algorithm alg);
/// eltwise of one activation; `of` picks it from the problem (gelu: its approximation).
plan_builder eltwise_plan(ops::common_gemm::activation (*of)(const problem&));
/// binary with `alg` (binary_add, binary_mul).
plan_builder binary_plan(dnnl::algorithm alg);
/// pooling_v2 with the algorithm `of` picks from the problem (max, avg with or without padding).
plan_builder pool_plan(dnnl::algorithm (*of)(const problem&));
plan layer_norm_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                     const dnnl::engine&);
plan reduce_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                 const dnnl::engine&);

}  // namespace opval::onednn
