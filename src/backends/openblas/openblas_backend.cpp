// The `openblas` backend: matmul as OpenBLAS's cblas_sgemm (dt=f32) and cblas_dgemm (dt=f64),
// one call per batch element. Transposes and padded leading dimensions are handed to BLAS as
// its trans flags and lda/ldb/ldc, read from the operands' own strides, so that the library's
// layout handling is what gets tested (no repacking on our side).
#include <cblas.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backends/op_handlers.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/backend.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

using ops::common_gemm::batch_offsets;
using ops::common_gemm::epilogue_spec;
using ops::common_gemm::non_gemm_feature;

// A logical rows x cols matrix as row-major BLAS addresses it.
struct blas_matrix {
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  blasint ld = 1;
};

blasint to_blasint(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<blasint>::max())
    throw error(std::string("openblas: ") + what + "=" + std::to_string(v) + " does not fit BLAS's integer");
  return static_cast<blasint>(v);
}

// How a rows x cols matrix with element strides (rs, cs) maps onto row-major BLAS: NoTrans
// when its rows are contiguous (ld = rs), Trans when its columns are (stored cols x rows,
// ld = cs). A single row or column leaves the leading dimension free; BLAS still demands
// ld >= the stored row length, so it gets that. nullopt when neither stride is unit.
std::optional<blas_matrix> blas_view(std::int64_t rows, std::int64_t cols, std::int64_t rs,
                                     std::int64_t cs) {
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols))
    return blas_matrix{CblasNoTrans, to_blasint(rows == 1 ? cols : rs, "ld")};
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows))
    return blas_matrix{CblasTrans, to_blasint(cols == 1 ? rows : cs, "ld")};
  return std::nullopt;
}

// blas_view of the two innermost dimensions of t; throws when BLAS cannot address them.
blas_matrix blas_view_of(const tensor& t, const char* name) {
  const int r = t.rank();
  const auto v = blas_view(t.shape()[r - 2], t.shape()[r - 1], t.strides()[r - 2], t.strides()[r - 1]);
  if (!v)
    throw error(std::string("openblas: operand ") + name + " has strides " + to_string(t.strides()) +
                " with no unit stride in its matrix dimensions; BLAS cannot address it");
  return *v;
}

// Which GEMM serves contract c: "sgemm", "dgemm", or empty (only the plain IEEE contracts:
// OpenBLAS rounds to nearest, keeps subnormals and has no reduced-precision math mode).
std::string gemm_routine(const contract& c) {
  if (c == parse_contract_types("f32:f32:f32")) return "sgemm";
  if (c == parse_contract_types("f64:f64:f64")) return "dgemm";
  return {};
}

void gemm(const blas_matrix& a, const blas_matrix& b, blasint m, blasint n, blasint k, float alpha,
          const float* pa, const float* pb, float beta, float* pc, blasint ldc) {
  cblas_sgemm(CblasRowMajor, a.trans, b.trans, m, n, k, alpha, pa, a.ld, pb, b.ld, beta, pc, ldc);
}
void gemm(const blas_matrix& a, const blas_matrix& b, blasint m, blasint n, blasint k, double alpha,
          const double* pa, const double* pb, double beta, double* pc, blasint ldc) {
  cblas_dgemm(CblasRowMajor, a.trans, b.trans, m, n, k, alpha, pa, a.ld, pb, b.ld, beta, pc, ldc);
}

// dst = alpha * A . B + beta * C over every batch element; C (when beta != 0) is first copied
// into dst, whose layout it shares, because BLAS updates C in place.
template <class T>
void run_gemm(const epilogue_spec& e, const tensor& a, const tensor& b, const tensor* c, tensor& dst) {
  const int r = dst.rank();
  const dims out_batch(dst.shape().begin(), dst.shape().end() - 2);
  const std::int64_t m = dst.shape()[r - 2], n = dst.shape()[r - 1], k = a.shape().back();
  const blas_matrix va = blas_view_of(a, "A"), vb = blas_view_of(b, "B"), vd = blas_view_of(dst, "dst");
  if (vd.trans != CblasNoTrans)
    throw error("openblas: dst strides " + to_string(dst.strides()) + " are column-major; row-major BLAS cannot write them");
  const auto oa = batch_offsets(out_batch, a), ob = batch_offsets(out_batch, b), od = batch_offsets(out_batch, dst);
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* pd = dst.data_as<T>();
  if (c) {
    const auto oc = batch_offsets(out_batch, *c);
    const T* pc = c->data_as<T>();
    const std::int64_t crs = c->strides()[r - 2], ccs = c->strides()[r - 1];
    const std::int64_t drs = dst.strides()[r - 2], dcs = dst.strides()[r - 1];
    for (std::size_t bi = 0; bi < od.size(); ++bi)
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) pd[od[bi] + i * drs + j * dcs] = pc[oc[bi] + i * crs + j * ccs];
  }
  const blasint bm = to_blasint(m, "m"), bn = to_blasint(n, "n"), bk = to_blasint(k, "k");
  for (std::size_t bi = 0; bi < od.size(); ++bi)
    gemm(va, vb, bm, bn, bk, static_cast<T>(e.alpha), pa + oa[bi], pb + ob[bi], static_cast<T>(e.beta),
         pd + od[bi], vd.ld);
}

// matmul as one ?gemm call per batch element.
execution_info blas_matmul(const problem& p, std::span<const tensor> in, std::span<tensor> out) {
  const std::string routine = gemm_routine(p.dt);
  if (routine.empty()) throw error("openblas: execute called for unsupported dt=" + p.dt.to_string());
  const epilogue_spec e = ops::common_gemm::read_epilogue(p, true);
  // Inputs are A, B, then C exactly when beta != 0 (non_gemm_feature excluded the rest).
  const tensor* c = e.beta != 0.0 ? &in[2] : nullptr;
  if (routine == "sgemm") run_gemm<float>(e, in[0], in[1], c, out[0]);
  else run_gemm<double>(e, in[0], in[1], c, out[0]);
  return {"cblas_" + routine + " (OpenBLAS core " + openblas_get_corename() + ")", ""};
}

using blas_handler = execution_info (*)(const problem&, std::span<const tensor>, std::span<tensor>);

const detail::op_handlers<blas_handler>& handlers() {
  static const detail::op_handlers<blas_handler> table("openblas", {{"matmul", blas_matmul}});
  return table;
}

class openblas_backend final : public backend {
 public:
  std::string name() const override { return "openblas"; }
  std::optional<int> set_threads(int n) override {
    const int before = openblas_get_num_threads();
    openblas_set_num_threads(n);
    return before;
  }
  std::string version() const override {
    return std::string(openblas_get_config()) + " (core " + openblas_get_corename() + ")";
  }

  support supports(const problem& p) const override {
    if (!handlers().find(p)) return handlers().unimplemented(p);
    if (gemm_routine(p.dt).empty())
      return support::unimplemented("openblas implements matmul dt=f32 (sgemm) and dt=f64 (dgemm) only, not " +
                                    p.dt.to_string());
    const std::string feature = non_gemm_feature(p, ops::common_gemm::read_epilogue(p, true));
    if (!feature.empty())
      return support::unimplemented("openblas GEMM has no " + feature +
                                    " (cblas_?gemm computes alpha*op(A)*op(B) + beta*C only)");
    return support::yes();
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    return handlers().at(p)(p, in, out);
  }
};

std::unique_ptr<backend> make_openblas() { return std::make_unique<openblas_backend>(); }

}  // namespace

OPVAL_REGISTER_BACKEND(openblas, make_openblas);

}  // namespace opval
