#pragma once
// matmul: batched, broadcasting, transposable GEMM with a fused epilogue.
//
// Attributes (schema in spec.cpp):
//   m n k              the product is (m x k) . (k x n)
//   batch_a batch_b    batch dims of A and B (e.g. batch_a=2x1 batch_b=3), broadcast as NumPy
//                      does (right-aligned, 1 stretches): dst has batch dims 2x3
//   ta tb              the stored layout is transposed (A stored k x m, B stored n x k); the
//                      logical shapes stay [batch..., m, k] and [batch..., k, n] with strides
//   lda ldb ldc        leading dimensions of the stored matrices (0 = tight); ldc also lays out C
//   alpha beta bias act residual scale_a scale_b scale_b_mode zp_a zp_b scale_dst zp_dst
//                      the epilogue of common_gemm/epilogue.hpp:
//     dst = act(alpha*scale_a*scale_b[n]*sum_k (a-zp_a)(b-zp_b) + beta*C + bias[n]) + residual
//   block block_scale  block scaling (OCP MX: block=32 block_scale=f8_e8m0; NVFP4: block=16
//                      block_scale=f8_e4m3, its per-tensor f32 scale as scale_a / scale_b): A
//                      and B hold elements (f8_e4m3 f8_e5m2 f6_e2m3 f6_e3m2 f4_e2m1), each block
//                      of `block` consecutive k scaled by A_scale [batch_a..., m, k/block] and
//                      B_scale [batch_b..., k/block, n] (row-major; ta/tb transpose the
//                      elements only): a = A * A_scale, b = B * B_scale in the formula below
// Inputs in order: A, B, then A_scale and B_scale (block > 0), C (beta != 0), bias [n],
// residual (dst's shape), scale_b [n] (scale_b_mode=per_channel). Output: dst.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/attr.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::matmul {

/// The shapes of one matmul problem.
struct matmul_shape {
  std::int64_t m = 0, n = 0, k = 0;
  dims batch_a, batch_b, batch;  ///< batch = broadcast(batch_a, batch_b)
  std::int64_t batch_count = 1;
};

/// Reads and checks the shape attributes (throws opval::error naming the attribute).
matmul_shape read_shape(const problem& p);

/// The strides of a logical [batch..., rows, cols] matrix stored transposed or not with
/// leading dimension ld (0 = tight).
layout matrix_layout(const dims& batch, std::int64_t rows, std::int64_t cols, bool transposed,
                     std::int64_t ld);

/// Descriptor lines of the suite `tag` (smoke, regression).
std::vector<std::string> matmul_suite(std::string_view tag);

/// The logical shape [batch..., rows, cols] of a batched matrix.
dims with_matrix(dims batch, std::int64_t rows, std::int64_t cols);

/// The epilogue operands of output element `linear` (= (ob*m + i)*n + j): channel j.
common_gemm::epilogue_reader reader_of(const matmul_shape& s, const common_gemm::epilogue_spec& e,
                                       std::span<const tensor> in);

/// The values of A and B (logical row-major) as the product uses them: the stored values, or
/// for block scaling each element times its block's scale (exact in fp64).
std::pair<std::vector<double>, std::vector<double>> operand_values(const common_gemm::epilogue_spec& e,
                                                                   std::span<const tensor> in);

/// The exact dot products s (zero points removed) of every output, in fp64, or the sums of
/// their products' magnitudes or squares (`v`).
std::vector<double> exact_dots(const matmul_shape& s, const common_gemm::epilogue_spec& e,
                               std::span<const tensor> in, common_gemm::dot_values v);

/// The matmul op. spec.cpp: name, schema, contracts, validation, operands, counts, fill and
/// registration; reference.cpp: the fp64 reference and the contract-exact simulation;
/// bound.cpp: the error model; suite.cpp: the suites; sample.cpp: sampled verification
/// (the output sample and the checksums).
class matmul_spec final : public op_spec {
 public:
  matmul_spec();
  std::string_view name() const override;
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  std::vector<std::string> contracts() const override;
  // The epilogue's activations (gelu, silu) take the functions' accuracy.
  std::vector<std::string_view> contract_options() const override {
    return {"in_round", "acc_round", "denorm", "dst_round", "ulp:exp", "ulp:erf", "ulp:tanh", "ulp:div"};
  }
  void validate(const problem& p) const override;
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<kernel_hypothesis> hypotheses(const problem& p) const override;
  std::optional<output_sample> sample(const problem& p, std::span<const tensor> in, std::uint64_t seed) const override;
  std::vector<checksum_result> checksums(const problem& p, const fill_traits& f, const bound_options& o,
                                         std::span<const tensor> in, std::span<const tensor> out,
                                         std::uint64_t seed) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// Sizes, transposes, leading dimensions, batches, the epilogue, the fills.
  feature_table features() const override;

 private:
  attr_schema schema_;
};

}  // namespace opval::ops::matmul
