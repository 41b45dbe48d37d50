#pragma once
// The fp64 reference GEMM of matmul and conv2d: cache-blocked (BLIS-style packing for L1/L2),
// a register-tiled 8x24 micro-kernel (AVX-512 when the CPU has it), OpenMP-parallel.
#include <cstdint>

namespace opval::ops::common_gemm {

/// C = A * B in fp64, overwriting C (m x n, row-major with leading dimension ldc).
/// Element (i, p) of A is a[i*rsa + p*csa] and (p, j) of B is b[p*rsb + j*csb], so any
/// transposed or padded layout is read directly. Uses all OpenMP threads unless called from
/// inside an active parallel region.
void reference_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                    std::int64_t rsa, std::int64_t csa, const double* b, std::int64_t rsb,
                    std::int64_t csb, double* c, std::int64_t ldc);

/// Row-major tight operands: A m x k, B k x n, C m x n.
inline void reference_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                           const double* b, double* c) {
  reference_gemm(m, n, k, a, k, 1, b, n, 1, c, n);
}

}  // namespace opval::ops::common_gemm
