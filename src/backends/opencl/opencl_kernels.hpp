#pragma once
// The OpenCL C sources of the `opencl` backend, compiled at run time by clBuildProgram.
// Deliberately plain (one work-item per output element or row, f32 accumulation) so that
// they test the device's compiler and math library, not a tuning strategy.

namespace opval::opencl_kernels {

/// d[b][i][j] = alpha * sum_p a[b][i][p] * b[b][p][j] (+ beta * c[b][i][j]) over an NDRange
/// (n, m, batch). Element strides (rs, cs) per matrix express ta/tb/lda/ldb/ldc; per-batch
/// element offsets (one per output batch element) express NumPy-style batch broadcasting.
inline constexpr const char* matmul = R"CLC(
__kernel void matmul_naive(__global const float* a, __global const float* b,
                           __global const float* c, __global float* d,
                           const long m, const long n, const long k,
                           const long a_rs, const long a_cs, const long b_rs, const long b_cs,
                           const long c_rs, const long c_cs, const long d_rs, const long d_cs,
                           __global const long* a_off, __global const long* b_off,
                           __global const long* c_off, __global const long* d_off,
                           const float alpha, const float beta, const int has_c) {
  const long j = get_global_id(0), i = get_global_id(1), bi = get_global_id(2);
  if (i >= m || j >= n) return;
  __global const float* pa = a + a_off[bi] + i * a_rs;
  __global const float* pb = b + b_off[bi] + j * b_cs;
  float acc = 0.0f;
  for (long p = 0; p < k; ++p) acc = fma(pa[p * a_cs], pb[p * b_rs], acc);
  float r = alpha * acc;
  if (has_c) r = fma(beta, c[c_off[bi] + i * c_rs + j * c_cs], r);
  d[d_off[bi] + i * d_rs + j * d_cs] = r;
}
)CLC";

/// Softmax along one axis of a contiguous tensor viewed as outer x len x inner; one
/// work-item per row (outer * inner of them): max subtraction, exp, sum, divide.
inline constexpr const char* softmax = R"CLC(
__kernel void softmax_rows(__global const float* x, __global float* y, const long len,
                           const long inner) {
  const long r = get_global_id(0);
  const long base = (r / inner) * len * inner + r % inner;
  float mx = -INFINITY;
  for (long j = 0; j < len; ++j) mx = fmax(mx, x[base + j * inner]);
  float s = 0.0f;
  for (long j = 0; j < len; ++j) {
    const float e = exp(x[base + j * inner] - mx);
    y[base + j * inner] = e;
    s += e;
  }
  for (long j = 0; j < len; ++j) y[base + j * inner] = y[base + j * inner] / s;
}
)CLC";

/// Layer normalization of contiguous rows of n elements; one work-item per row: two-pass
/// mean and variance, rsqrt(var + eps), then the optional affine gamma/beta.
inline constexpr const char* layer_norm = R"CLC(
__kernel void layer_norm_rows(__global const float* x, __global const float* gamma,
                              __global const float* beta, __global float* y, const long n,
                              const float eps, const int affine) {
  const long r = get_global_id(0);
  __global const float* xr = x + r * n;
  __global float* yr = y + r * n;
  float s = 0.0f;
  for (long j = 0; j < n; ++j) s += xr[j];
  const float mean = s / (float)n;
  float q = 0.0f;
  for (long j = 0; j < n; ++j) {
    const float dv = xr[j] - mean;
    q = fma(dv, dv, q);
  }
  const float inv = rsqrt(q / (float)n + eps);
  for (long j = 0; j < n; ++j) {
    const float v = (xr[j] - mean) * inv;
    yr[j] = affine ? fma(v, gamma[j], beta[j]) : v;
  }
}
)CLC";

}  // namespace opval::opencl_kernels
