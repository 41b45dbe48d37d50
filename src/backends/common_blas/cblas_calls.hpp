#pragma once
// The standard CBLAS calls of a BLAS backend's library description (cblas_backend.hpp), for
// any library whose cblas.h declares the reference CBLAS interface (OpenBLAS, BLIS, ...).
// Include that cblas.h first: these calls bind to the declarations in scope, and so to the
// library the module links.
namespace opval::blas {

/// ?gemm as row-major cblas_sgemm / cblas_dgemm with `Index` the library's BLAS integer, and
/// the address of cblas_sgemm as this module binds it. `Library` is the module's own
/// description (in its anonymous namespace), so each module's instantiation is its own entity
/// (two BLAS modules never share one definition of these calls, whatever the build links).
template <class Library, class Index>
struct standard_cblas {
  using index = Index;
  static void gemm(bool ta, bool tb, index m, index n, index k, float alpha, const float* a, index lda, const float* b,
                   index ldb, float beta, float* c, index ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
                ldb, beta, c, ldc);
  }
  static void gemm(bool ta, bool tb, index m, index n, index k, double alpha, const double* a, index lda,
                   const double* b, index ldb, double beta, double* c, index ldc) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
                ldb, beta, c, ldc);
  }
  static const void* sgemm_address() { return reinterpret_cast<const void*>(&cblas_sgemm); }
};

}  // namespace opval::blas
