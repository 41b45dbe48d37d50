// matmul: sampled verification (docs/NUMERICS.md "Sampled verification"): the stratified sample
// of each output matrix as a smaller matmul on the gathered rows of A and columns of B, and the
// checksums of the whole output (common_gemm/gemm_sample.hpp, gemm_checksum.hpp).
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_checksum.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/common_gemm/gemm_sample.hpp"
#include "ops/matmul/matmul.hpp"

namespace opval::ops::matmul {

using namespace common_gemm;

namespace {

// Element offsets of each output batch's matrix in a contiguous operand of batch dims `batch`
// (rows x cols matrices; broadcast batches read the same one).
std::vector<std::int64_t> matrix_offsets(const matmul_shape& s, const dims& batch, std::int64_t rows,
                                         std::int64_t cols) {
  const dims shape = with_matrix(batch, rows, cols);
  return batch_offsets(s.batch, shape, row_major_strides(shape));
}

// The gathered operand of sample rows x cols: A's rows and B's columns, C's and the residual's
// both, bias' and scale_b's columns (block scales follow their operand).
tensor gathered(const tensor& t, operand_role role, std::span<const std::int64_t> rows,
                std::span<const std::int64_t> cols) {
  const int last = t.rank() - 1;
  switch (role) {
    case operand_role::a:
    case operand_role::a_scale: return take(t, last - 1, rows);
    case operand_role::b:
    case operand_role::b_scale: return take(t, last, cols);
    case operand_role::c:
    case operand_role::residual: return take(take(t, last - 1, rows), last, cols);
    case operand_role::bias:
    case operand_role::scale: break;
  }
  return take(t, 0, cols);  // one value per column
}

// Whether the checksums read t in place: contiguous f32.
bool read_in_place(const tensor& t) { return t.is_contiguous() && t.type() == dtype::f32; }

bool all_finite(const tensor& t) {
  const float* v = t.data_as<float>();
  bool finite = true;
#pragma omp parallel for reduction(&& : finite) schedule(static)
  for (std::int64_t i = 0; i < t.numel(); ++i) finite = finite && std::isfinite(v[i]);
  return finite;
}

}  // namespace

std::optional<output_sample> matmul_spec::sample(const problem& p, std::span<const tensor> in,
                                                 std::uint64_t seed) const {
  const matmul_shape s = read_shape(p);
  const std::vector<std::int64_t> rows = sampled_indices(s.m, sample_tile, seed, 0);
  const std::vector<std::int64_t> cols = sampled_indices(s.n, sample_tile, seed, 1);
  output_sample out{.sub = p};
  out.sub.set("m", std::int64_t(rows.size()));
  out.sub.set("n", std::int64_t(cols.size()));
  for (const char* layout : {"ta", "tb"}) out.sub.set(layout, false);
  for (const char* ld : {"lda", "ldb", "ldc"}) out.sub.set(ld, std::int64_t(0));
  const std::vector<operand_role> roles = roles_of(read_epilogue(p, true), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out.inputs.push_back(gathered(in[i], roles[i], rows, cols));
  std::vector<std::int64_t>& where = out.where.emplace_back();
  where.reserve(std::size_t(s.batch_count) * rows.size() * cols.size());
  for (std::int64_t ob = 0; ob < s.batch_count; ++ob)
    for (const std::int64_t i : rows)
      for (const std::int64_t j : cols) where.push_back((ob * s.m + i) * s.n + j);
  out.coverage = sample_coverage(sample_tile);
  return out;
}

std::vector<checksum_result> matmul_spec::checksums(const problem& p, const fill_traits& f, const bound_options& o,
                                                    std::span<const tensor> in, std::span<const tensor> out,
                                                    std::uint64_t seed) const {
  const matmul_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, true);
  const operand_slots sl = slots_of(e);
  checksum_operands x{.m = s.m, .n = s.n, .k = s.k, .batches = s.batch_count};
  x.a_offset = matrix_offsets(s, s.batch_a, s.m, s.k);
  x.b_offset = matrix_offsets(s, s.batch_b, s.k, s.n);
  if (read_in_place(in[0]) && read_in_place(in[1]) && read_in_place(out[0]) && e.block == 0 && e.zp_a == 0 &&
      e.zp_b == 0) {
    if (!all_finite(in[0]) || !all_finite(in[1])) return {};  // special values: no linear checksum
    x.a32 = in[0].data_as<float>(), x.b32 = in[1].data_as<float>(), x.y32 = out[0].data_as<float>();
  } else {
    auto [a, b] = operand_values(e, in);
    x.a = dot_operand(std::move(a), e.zp_a, dot_values::signed_values, true);
    x.b = dot_operand(std::move(b), e.zp_b, dot_values::signed_values, false);
    x.y = out[0].to_vector();
  }
  read_epilogue_operands(x, sl, in);
  return gemm_checksums(p, e, x, f, o, seed);
}

}  // namespace opval::ops::matmul
