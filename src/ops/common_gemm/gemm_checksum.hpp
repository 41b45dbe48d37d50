#pragma once
// Checksums of GEMM-like outputs (op_spec::checksums; docs/NUMERICS.md "Sampled verification"):
// Freivalds' test with Gaussian vectors, row and column sums, computed in fp64 from the
// kernel's output and from the inputs, under a threshold derived from the op's own error bound.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"

namespace opval::ops::common_gemm {

/// A GEMM-like output and its operands as the checksums read them, in fp64, logical row-major:
/// Y = f * (A B) + beta C + bias + residual per output batch, f = alpha scale_a scale_b[j].
struct checksum_operands {
  std::int64_t m = 0, n = 0, k = 0, batches = 1;
  std::vector<double> a, b;  ///< as the dot products use them (zero points removed, blocks scaled)
  std::vector<std::int64_t> a_offset, b_offset;  ///< per output batch: where its A and B start
  std::vector<double> y;                 ///< the kernel's output, batches x m x n
  std::vector<double> c, residual;       ///< batches x m x n, or empty
  std::vector<double> bias, scale;       ///< n values, or empty (scale: per-channel scale_b)
  /// Contiguous f32 A, B and output read in place instead of a, b and y (no zero points, no
  /// block scales): a 4096^2 GEMM's checks then copy nothing.
  const float *a32 = nullptr, *b32 = nullptr, *y32 = nullptr;
  /// Where A is stored as no matrix (conv2d's im2row of src): fills output batch ob's A
  /// (m x k, fp64) instead of a and a_offset, one batch at a time.
  std::function<void(std::int64_t ob, std::vector<double>& a)> a_of;
  /// Per output batch: where its n bias and scale values start (empty: at 0).
  std::vector<std::int64_t> column_offset;
  /// How a failure names the rows, the columns and an output batch (for conv2d: output
  /// positions, channels, "image 3, group 1").
  std::string row_name = "rows", column_name = "columns";
  std::function<std::string(std::int64_t ob)> batch_name = [](std::int64_t ob) { return "output batch " + std::to_string(ob); };
};

/// The vectors each way (rows and columns) the checksums draw.
inline constexpr int checksum_vectors = 2;

/// The checksums of output 0 (checksum_result): for r Gaussian vectors x, Y x against
/// f A (B x) + (beta C + bias + residual) x row by row, and likewise y^T Y column by column.
/// A correct kernel's error e_ij, at most its element's bound b_ij, gives sum_j e_ij x_j ~
/// N(0, sum_j e_ij^2): the threshold is z sqrt(sum_j b_ij^2) at the policy's false-alarm rate
/// (z from a union bound over every row and column test), with b_ij bounded row by row from
/// the operands' norms (Cauchy-Schwarz: sum|a||b| <= |a|_2 |b|_2) through the op's own error
/// model (epilogue_error), plus the fp64 evaluation's own error. Empty where no linear
/// checksum applies: an activation, an integer dst, special values in the inputs, or no
/// meaningful bound.
std::vector<checksum_result> gemm_checksums(const problem& p, const epilogue_spec& e, const checksum_operands& x,
                                            const fill_traits& f, const bound_options& o, std::uint64_t seed);

/// Reads the epilogue operands among `in` (C, bias, residual, per-channel scale, where `sl`
/// says) into x; C and the residual, shaped as the output, through `as_output` when given (the
/// output's own reordering into x.y's batch x m x n layout).
void read_epilogue_operands(checksum_operands& x, const operand_slots& sl, std::span<const tensor> in,
                            const std::function<std::vector<double>(std::vector<double>)>& as_output = {});

/// Whether every value is finite (a linear checksum needs it).
bool all_finite(std::span<const double> v);

}  // namespace opval::ops::common_gemm
