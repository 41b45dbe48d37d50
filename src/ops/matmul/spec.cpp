// The matmul op spec: schema, shapes, fill, fp64 reference, contract-exact simulation, bound.
// This file: schema, shapes, validation, operands, counts, fill and registration; the fp64
// reference and the contract-exact simulation are in reference.cpp, the bound in bound.cpp,
// the suites in suite.cpp.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_block/block_scaling.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/matmul/matmul.hpp"
#include "core/size_product.hpp"
#include "opval/attr.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::matmul {

using namespace common_gemm;

matmul_shape read_shape(const problem& p) {
  matmul_shape s;
  s.m = p.get_int("m");
  s.n = p.get_int("n");
  s.k = p.get_int("k");
  s.batch_a = p.get_dims("batch_a");
  s.batch_b = p.get_dims("batch_b");
  const std::size_t rank = std::max(s.batch_a.size(), s.batch_b.size());
  s.batch.assign(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - s.batch_a.size() ? 1 : s.batch_a[i - (rank - s.batch_a.size())];
    const std::int64_t db = i < rank - s.batch_b.size() ? 1 : s.batch_b[i - (rank - s.batch_b.size())];
    if (da < 0 || db < 0) throw error("batch_a / batch_b extents must be >= 0");
    if (da != db && da != 1 && db != 1)
      throw error("batch_a=" + to_string(s.batch_a) + " and batch_b=" + to_string(s.batch_b) +
                  " do not broadcast (extents must match or be 1)");
    s.batch[i] = da == 1 ? db : da;  // NumPy: 1 broadcasts, to 0 too
  }
  s.batch_count = element_count(s.batch);
  return s;
}

layout matrix_layout(const dims& batch, std::int64_t rows, std::int64_t cols, bool transposed,
                     std::int64_t ld) {
  // Stored as (transposed ? cols x rows : rows x cols) with a padded leading dimension.
  const std::int64_t inner = transposed ? rows : cols, outer = transposed ? cols : rows;
  const std::int64_t lead = ld == 0 ? inner : ld;
  layout lay;
  lay.strides.assign(batch.size() + 2, 1);
  const std::size_t r = batch.size();
  lay.strides[r] = transposed ? 1 : lead;
  lay.strides[r + 1] = transposed ? lead : 1;
  std::int64_t stride = outer * lead;
  for (std::size_t i = r; i-- > 0;) {
    lay.strides[i] = stride;
    stride = size_product(stride, batch[i], "the batched matrix");
  }
  return lay;
}

dims with_matrix(dims batch, std::int64_t rows, std::int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

matmul_spec::matmul_spec()
    : schema_(common_gemm::schema_with_epilogue({
          int_attr("m", 1, "rows of A and dst", 0),
          int_attr("n", 1, "columns of B and dst", 0),
          int_attr("k", 1, "the reduction length", 0),
          dims_attr("batch_a", {}, "batch dims of A (broadcast against batch_b, NumPy rules)"),
          dims_attr("batch_b", {}, "batch dims of B"),
          bool_attr("ta", false, "A is stored transposed (k x m)"),
          bool_attr("tb", false, "B is stored transposed (n x k)"),
          int_attr("lda", 0, "leading dimension of stored A (0 = tight)", 0),
          int_attr("ldb", 0, "leading dimension of stored B (0 = tight)", 0),
          int_attr("ldc", 0, "leading dimension of dst and C (0 = tight)", 0),
          int_attr("block", 0,
                   "block scaling (OCP MX: 32, NVFP4: 16): elements of A and B per scale along k, the scales "
                   "the inputs A_scale [batch_a..., m, k/block] and B_scale [batch_b..., k/block, n]; 0: none",
                   0, 1 << 20),
          common_block::block_scale_attr(),
      }, true)) {}

std::string_view matmul_spec::name() const { return "matmul"; }

std::string_view matmul_spec::summary() const {
  return "batched GEMM (broadcast, transposes, padded ld) with alpha/beta, bias, activation, residual; float, fp8, int8, MX and NVFP4 block-scaled";
}

const attr_schema& matmul_spec::schema() const { return schema_; }

std::vector<std::string> matmul_spec::contracts() const {
  std::vector<std::string> all = gemm_contracts();
  for (std::string& c : block_scaled_contracts())
    if (std::find(all.begin(), all.end(), c) == all.end()) all.push_back(std::move(c));
  return all;
}

void matmul_spec::validate(const problem& p) const {
  const matmul_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, true);
  check_block_scaling(p, e, s.k);
  if (e.block == 0) check_contract("matmul", p.dt);
  const std::int64_t lda = p.get_int("lda"), ldb = p.get_int("ldb"), ldc = p.get_int("ldc");
  auto check_ld = [](const char* name, std::int64_t ld, std::int64_t min) {
    if (ld != 0 && ld < min)
      throw error(std::string(name) + "=" + std::to_string(ld) + " is smaller than the stored row length " +
                  std::to_string(min));
  };
  check_ld("lda", lda, p.get_bool("ta") ? s.m : s.k);
  check_ld("ldb", ldb, p.get_bool("tb") ? s.k : s.n);
  check_ld("ldc", ldc, s.n);
  if (i32_may_overflow(p.dt, e, double(s.k)))
    throw error("k=" + std::to_string(s.k) + " can overflow the i32 accumulator with these zero points");
}

std::vector<operand> matmul_spec::inputs(const problem& p) const {
  const matmul_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, true);
  std::vector<operand> ops;
  ops.push_back({"A", p.dt.src, with_matrix(s.batch_a, s.m, s.k),
                 matrix_layout(s.batch_a, s.m, s.k, p.get_bool("ta"), p.get_int("lda"))});
  ops.push_back({"B", p.dt.wei, with_matrix(s.batch_b, s.k, s.n),
                 matrix_layout(s.batch_b, s.k, s.n, p.get_bool("tb"), p.get_int("ldb"))});
  if (e.block > 0) {  // the block scales, row-major: A's along k in each row, B's along k in each column
    ops.push_back({"A_scale", e.block_scale, with_matrix(s.batch_a, s.m, s.k / e.block), {}});
    ops.push_back({"B_scale", e.block_scale, with_matrix(s.batch_b, s.k / e.block, s.n), {}});
  }
  const dims out = with_matrix(s.batch, s.m, s.n);
  if (e.beta != 0.0) ops.push_back({"C", aux_type(p.dt), out, matrix_layout(s.batch, s.m, s.n, false, p.get_int("ldc"))});
  if (e.has_bias) ops.push_back({"bias", aux_type(p.dt), {s.n}, {}});
  if (e.has_residual) ops.push_back({"residual", aux_type(p.dt), out, {}});
  if (e.per_channel) ops.push_back({"scale_b", dtype::f32, {s.n}, {}});
  return ops;
}

std::vector<operand> matmul_spec::outputs(const problem& p) const {
  const matmul_shape s = read_shape(p);
  return {{"dst", p.dt.dst, with_matrix(s.batch, s.m, s.n),
           matrix_layout(s.batch, s.m, s.n, false, p.get_int("ldc"))}};
}

op_counts matmul_spec::counts(const problem& p) const {
  const matmul_shape s = read_shape(p);
  return gemm_counts(*this, p, 2.0 * double(s.m) * double(s.n) * double(s.k) * double(s.batch_count));
}

fill_traits matmul_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  const epilogue_spec e = read_epilogue(p, true);
  return fill_gemm(p, e, read_shape(p).k, roles_of(e, in.size()), seed, in);
}

OPVAL_REGISTER_OP(matmul_spec);

}  // namespace opval::ops::matmul
