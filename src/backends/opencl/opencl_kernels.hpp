#pragma once
// The OpenCL C sources of the `opencl` backend, compiled at run time by clBuildProgram.
// Deliberately plain (one work-item per output element or row, f32 accumulation) so that
// they test the device's compiler and math library, not a tuning strategy.
//
// Each kernel body is written once and reads / writes its operands only through macros
// (`X_T` the element type, `LOAD_X(p, i)`, `STORE_X(v, p, i)` for operand X), which
// storage_macros() defines per operand for f32 or f16 storage. f16 is storage only:
// vload_half widens to float and vstore_half_rte rounds to nearest, so all arithmetic stays
// f32 and no cl_khr_fp16 is needed (PoCL's CPU device has none).
#include <string>

namespace opval::opencl_kernels {

/// How one kernel operand is stored in device memory.
enum class storage : unsigned char { f32, f16 };

/// The `#define`s of <prefix>_T, LOAD_<prefix>(p, i) and STORE_<prefix>(v, p, i) for one
/// operand of a kernel body (e.g. prefix "A").
inline std::string storage_macros(const std::string& prefix, storage type) {
  const bool f32 = type == storage::f32;
  return "#define " + prefix + "_T " + (f32 ? "float" : "half") + "\n" +
         "#define LOAD_" + prefix + (f32 ? "(p, i) ((p)[(i)])" : "(p, i) vload_half((i), (p))") + "\n" +
         "#define STORE_" + prefix + (f32 ? "(v, p, i) ((p)[(i)] = (v))" : "(v, p, i) vstore_half_rte((v), (i), (p))") +
         "\n";
}

/// d[b][i][j] = alpha * sum_p a[b][i][p] * b[b][p][j] (+ beta * c[b][i][j]) over an NDRange
/// (n, m, batch). Element strides (rs, cs) per matrix express ta/tb/lda/ldb/ldc; per-batch
/// element offsets (one per output batch element) express NumPy-style batch broadcasting.
/// Operands A, B, C, D.
inline constexpr const char* matmul = R"CLC(
__kernel void matmul_naive(__global const A_T* a, __global const B_T* b,
                           __global const C_T* c, __global D_T* d,
                           const long m, const long n, const long k,
                           const long a_rs, const long a_cs, const long b_rs, const long b_cs,
                           const long c_rs, const long c_cs, const long d_rs, const long d_cs,
                           __global const long* a_off, __global const long* b_off,
                           __global const long* c_off, __global const long* d_off,
                           const float alpha, const float beta, const int has_c) {
  const long j = get_global_id(0), i = get_global_id(1), bi = get_global_id(2);
  if (i >= m || j >= n) return;
  const long pa = a_off[bi] + i * a_rs, pb = b_off[bi] + j * b_cs;
  float acc = 0.0f;
  for (long p = 0; p < k; ++p) acc = fma(LOAD_A(a, pa + p * a_cs), LOAD_B(b, pb + p * b_rs), acc);
  float r = alpha * acc;
  if (has_c) r = fma(beta, LOAD_C(c, c_off[bi] + i * c_rs + j * c_cs), r);
  STORE_D(r, d, d_off[bi] + i * d_rs + j * d_cs);
}
)CLC";

/// Softmax along one axis of a contiguous tensor viewed as outer x len x inner; one
/// work-item per row (outer * inner of them): max subtraction, exp, sum, then exp again
/// divided by the sum (y is written once, so a narrow y is rounded once). Operands X, Y.
inline constexpr const char* softmax = R"CLC(
__kernel void softmax_rows(__global const X_T* x, __global Y_T* y, const long len,
                           const long inner) {
  const long r = get_global_id(0);
  const long base = (r / inner) * len * inner + r % inner;
  float mx = -INFINITY;
  for (long j = 0; j < len; ++j) mx = fmax(mx, LOAD_X(x, base + j * inner));
  float s = 0.0f;
  for (long j = 0; j < len; ++j) s += exp(LOAD_X(x, base + j * inner) - mx);
  for (long j = 0; j < len; ++j) {
    const long at = base + j * inner;
    STORE_Y(exp(LOAD_X(x, at) - mx) / s, y, at);
  }
}
)CLC";

/// Layer normalization of contiguous rows of n elements; one work-item per row: two-pass
/// mean and variance, rsqrt(var + eps), then the optional affine gamma/beta. Operands X,
/// G (gamma and beta), Y.
inline constexpr const char* layer_norm = R"CLC(
__kernel void layer_norm_rows(__global const X_T* x, __global const G_T* gamma,
                              __global const G_T* beta, __global Y_T* y, const long n,
                              const float eps, const int affine) {
  const long r = get_global_id(0);
  const long row = r * n;
  float s = 0.0f;
  for (long j = 0; j < n; ++j) s += LOAD_X(x, row + j);
  const float mean = s / (float)n;
  float q = 0.0f;
  for (long j = 0; j < n; ++j) {
    const float dv = LOAD_X(x, row + j) - mean;
    q = fma(dv, dv, q);
  }
  const float inv = rsqrt(q / (float)n + eps);
  for (long j = 0; j < n; ++j) {
    const float v = (LOAD_X(x, row + j) - mean) * inv;
    STORE_Y(affine ? fma(v, LOAD_G(gamma, j), LOAD_G(beta, j)) : v, y, row + j);
  }
}
)CLC";

}  // namespace opval::opencl_kernels
