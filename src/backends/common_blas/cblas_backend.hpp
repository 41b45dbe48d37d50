#pragma once
// What every BLAS backend shares: matmul as the library's cblas_sgemm (dt=f32) and cblas_dgemm
// (dt=f64), one call per batch element, with transposes and padded leading dimensions handed
// to BLAS as its trans flags and lda/ldb/ldc read from the operands' own strides, so that the
// library's layout handling is what gets tested (no repacking on our side). A BLAS backend is a
// folder with a `Blas` description (its integer type and cblas.h through standard_cblas, its
// version and threads: see openblas_library in src/backends/openblas/) and one registration line.
//
// Header-only on purpose: each BLAS module compiles its own copy against its own cblas.h, and
// its calls bind to the library that module links. The modules are loaded with RTLD_LOCAL and
// build with hidden symbols (src/core/backend_modules.hpp), so two BLAS modules exporting the
// same cblas_sgemm never serve each other's backend; version() names the file the cblas_sgemm
// in use comes from, and a backend whose calls another BLAS in the global scope serves (which
// RTLD_LOCAL cannot prevent) SKIPs every case, saying so (tests/cpp/test_blas_backends.cpp).
#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/op_handlers.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/backend.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"

namespace opval::blas {

/// The file holding the function at `address` (the library a call binds to), or "?".
inline std::string library_file_of(const void* address) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "?";
  return std::filesystem::path(info.dli_fname).filename().string();
}

/// A BLAS backend for the library `Blas` describes (deriving from standard_cblas<its BLAS
/// integer>, cblas_calls.hpp, gives it index, gemm and sgemm_address):
///   using index = ...;                                         the library's BLAS integer
///   static constexpr const char* name;                         the backend's name
///   static constexpr const char* library;                      its library's file name starts so
///   static void gemm(bool trans_a, bool trans_b, index m, n, k, T alpha, const T* a, index lda,
///                    const T* b, index ldb, T beta, T* c, index ldc)   for T = float, double
///                                                              (row-major cblas_?gemm)
///   static const void* sgemm_address();                        &cblas_sgemm as this module binds it
///   static std::string version();   the library's build, e.g. "OpenBLAS 0.3.21 ..., core Haswell"
///   static std::string kernel();    what ran, for the record, e.g. "OpenBLAS core Haswell"
///   static int threads();  static void set_threads(int n);
///   static void release_threads();  (optional) stops the pool's workers polling for work
template <class Blas>
class cblas_backend final : public backend {
  using index = typename Blas::index;

  // A logical rows x cols matrix as row-major BLAS addresses it.
  struct blas_matrix {
    bool trans = false;
    index ld = 1;
  };

 public:
  std::string name() const override { return Blas::name; }
  std::optional<int> set_threads(int n) override {
    const int before = Blas::threads();
    Blas::set_threads(n);
    return before;
  }
  void release_threads() override {
    if constexpr (requires { Blas::release_threads(); }) Blas::release_threads();
  }
  std::string version() const override {
    return Blas::version() + ", cblas_sgemm from " + library_file_of(Blas::sgemm_address());
  }

  support supports(const problem& p) const override {
    if (!handlers().find(p)) return handlers().unimplemented(p);
    if (const std::string served = library_file_of(Blas::sgemm_address()); !served.starts_with(Blas::library))
      return support::skipped(std::string(Blas::name) + ": cblas_sgemm is served by " + served + ", not by " +
                              Blas::library + ": a BLAS in the process's global scope (the executable, LD_PRELOAD, "
                              "a library loaded RTLD_GLOBAL) interposes, so this backend would test the wrong library");
    if (gemm_routine(p.dt).empty())
      return support::unimplemented(std::string(Blas::name) + " implements matmul dt=f32 (sgemm) and dt=f64 (dgemm) only, not " +
                                    p.dt.to_string());
    const std::string feature = ops::common_gemm::non_gemm_feature(p, ops::common_gemm::read_epilogue(p, true));
    if (!feature.empty())
      return support::unimplemented(std::string(Blas::name) + " GEMM has no " + feature +
                                    " (cblas_?gemm computes alpha*op(A)*op(B) + beta*C only)");
    return support::yes();
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    return handlers().at(p)(p, in, out);
  }

 private:
  using handler = execution_info (*)(const problem&, std::span<const tensor>, std::span<tensor>);

  static const detail::op_handlers<handler>& handlers() {
    static const detail::op_handlers<handler> table(Blas::name, {{"matmul", matmul}});
    return table;
  }

  static index to_index(std::int64_t v, const char* what) {
    if (v < 0 || v > std::numeric_limits<index>::max())
      throw error(std::string(Blas::name) + ": " + what + "=" + std::to_string(v) + " does not fit BLAS's integer");
    return static_cast<index>(v);
  }

  // How a rows x cols matrix with element strides (rs, cs) maps onto row-major BLAS: NoTrans
  // when its rows are contiguous (ld = rs), Trans when its columns are (stored cols x rows,
  // ld = cs). A single row or column leaves the leading dimension free; BLAS still demands
  // ld >= the stored row length, so it gets that. nullopt when neither stride is unit.
  static std::optional<blas_matrix> view(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
    if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols)) return blas_matrix{false, to_index(rows == 1 ? cols : rs, "ld")};
    if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows)) return blas_matrix{true, to_index(cols == 1 ? rows : cs, "ld")};
    return std::nullopt;
  }

  // view() of the two innermost dimensions of t; throws when BLAS cannot address them.
  static blas_matrix view_of(const tensor& t, const char* operand) {
    const int r = t.rank();
    const auto v = view(t.shape()[r - 2], t.shape()[r - 1], t.strides()[r - 2], t.strides()[r - 1]);
    if (!v)
      throw error(std::string(Blas::name) + ": operand " + operand + " has strides " + to_string(t.strides()) +
                  " with no unit stride in its matrix dimensions; BLAS cannot address it");
    return *v;
  }

  // Which GEMM serves contract c: "sgemm", "dgemm", or empty (only the plain IEEE contracts:
  // BLAS rounds to nearest, keeps subnormals and has no reduced-precision math mode).
  static std::string gemm_routine(const contract& c) {
    if (c == parse_contract_types("f32:f32:f32")) return "sgemm";
    if (c == parse_contract_types("f64:f64:f64")) return "dgemm";
    return {};
  }

  // dst = alpha * A . B + beta * C over every batch element; C (when beta != 0) is first copied
  // into dst, whose layout it shares, because BLAS updates C in place.
  template <class T>
  static void run_gemm(const ops::common_gemm::epilogue_spec& e, const tensor& a, const tensor& b, const tensor* c,
                       tensor& dst) {
    using ops::common_gemm::batch_offsets;
    const int r = dst.rank();
    const dims out_batch(dst.shape().begin(), dst.shape().end() - 2);
    const std::int64_t m = dst.shape()[r - 2], n = dst.shape()[r - 1], k = a.shape().back();
    const blas_matrix va = view_of(a, "A"), vb = view_of(b, "B"), vd = view_of(dst, "dst");
    if (vd.trans)
      throw error(std::string(Blas::name) + ": dst strides " + to_string(dst.strides()) +
                  " are column-major; row-major BLAS cannot write them");
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
    const index bm = to_index(m, "m"), bn = to_index(n, "n"), bk = to_index(k, "k");
    for (std::size_t bi = 0; bi < od.size(); ++bi)
      Blas::gemm(va.trans, vb.trans, bm, bn, bk, static_cast<T>(e.alpha), pa + oa[bi], va.ld, pb + ob[bi], vb.ld,
                 static_cast<T>(e.beta), pd + od[bi], vd.ld);
  }

  // matmul as one ?gemm call per batch element.
  static execution_info matmul(const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const std::string routine = gemm_routine(p.dt);
    if (routine.empty()) throw error(std::string(Blas::name) + ": execute called for unsupported dt=" + p.dt.to_string());
    const ops::common_gemm::epilogue_spec e = ops::common_gemm::read_epilogue(p, true);
    // Inputs are A, B, then C exactly when beta != 0 (non_gemm_feature excluded the rest).
    const tensor* c = e.beta != 0.0 ? &in[2] : nullptr;
    if (routine == "sgemm") run_gemm<float>(e, in[0], in[1], c, out[0]);
    else run_gemm<double>(e, in[0], in[1], c, out[0]);
    return {"cblas_" + routine + " (" + Blas::kernel() + ")", ""};
  }
};

/// The factory of a BLAS backend, for OPVAL_REGISTER_BACKEND.
template <class Blas>
std::unique_ptr<backend> make_cblas_backend() {
  return std::make_unique<cblas_backend<Blas>>();
}

}  // namespace opval::blas
