/* sgemm_tiled: an example opval plugin, a register-tiled AVX2/FMA f32 GEMM.
 *
 * It implements plain matmul (dst = A . B, contract f32:f32:f32) for any strides (so
 * transposed and padded layouts, ta/tb/lda/ldb/ldc, are supported), and
 * rejects everything else through opval_plugin_supports() with a reason. Built twice:
 * `sgemm_tiled` and `sgemm_tiled_buggy` (PLANT_BUG=1), whose k tail loop stops one term
 * early, the kind of bug that passes every test whose k is a multiple of the unroll (8).
 * Written in C99 against include/opval/plugin.h only, as any plugin may be.
 */
#include <immintrin.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opval/plugin.h"

#ifndef PLANT_BUG
#define PLANT_BUG 0
#endif

enum { tile_m = 4, tile_n = 8, unroll_k = 8 };

/* Writes a reason or message and returns code. */
static int report(int code, char* buf, size_t size, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  if (size > 0) vsnprintf(buf, size, fmt, args);
  va_end(args);
  return code;
}

/* The value of attribute `name`, or NULL when the op has none. */
static const char* attr(const opval_problem* p, const char* name) {
  for (size_t i = 0; i < p->n_attrs; ++i)
    if (strcmp(p->attrs[i].name, name) == 0) return p->attrs[i].value;
  return NULL;
}

/* Attributes this kernel only supports at one value (the plain-GEMM defaults). ta, tb and
 * the leading dimensions are absent on purpose: they only change strides, which the kernel
 * honours. */
static const struct {
  const char* name;
  const char* plain;
  int numeric; /* compare as numbers (alpha=1 and alpha=1.0 are equal) */
} plain_gemm[] = {
    {"batch_a", "", 0},   {"batch_b", "", 0}, {"alpha", "1", 1},   {"beta", "0", 1},
    {"bias", "0", 0},     {"act", "none", 0}, {"residual", "0", 0}, {"scale_a", "1", 1},
    {"scale_b", "1", 1},  {"scale_dst", "1", 1},
};

uint32_t opval_plugin_abi_version(void) { return OPVAL_PLUGIN_ABI_VERSION; }

/* Minor 1: p->contract is the whole contract, so the strcmp below accepts f32 with the default
 * options only, not f32:f32:f32 denorm=ftz or acc_round=rz. */
uint32_t opval_plugin_abi_minor_version(void) { return OPVAL_PLUGIN_ABI_MINOR_VERSION; }

const char* opval_plugin_name(void) { return PLANT_BUG ? "sgemm_tiled_buggy" : "sgemm_tiled"; }

int opval_plugin_supports(const opval_problem* p, char* reason, size_t reason_size) {
  if (strcmp(p->op, "matmul") != 0)
    return report(OPVAL_PLUGIN_UNIMPLEMENTED, reason, reason_size,
                  "sgemm_tiled implements matmul only, not %s", p->op);
  if (strcmp(p->contract, "f32:f32:f32") != 0)
    return report(OPVAL_PLUGIN_UNIMPLEMENTED, reason, reason_size,
                  "sgemm_tiled implements dt=f32:f32:f32 only, not %s", p->contract);
  for (size_t i = 0; i < sizeof plain_gemm / sizeof plain_gemm[0]; ++i) {
    const char* v = attr(p, plain_gemm[i].name);
    if (!v) continue;
    int same = plain_gemm[i].numeric ? strtod(v, NULL) == strtod(plain_gemm[i].plain, NULL)
                                     : strcmp(v, plain_gemm[i].plain) == 0;
    if (!same)
      return report(OPVAL_PLUGIN_UNIMPLEMENTED, reason, reason_size,
                    "sgemm_tiled implements plain GEMM only: %s=%s is not supported",
                    plain_gemm[i].name, v);
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return report(OPVAL_PLUGIN_SKIPPED, reason, reason_size, "this CPU lacks AVX2/FMA");
  return OPVAL_PLUGIN_SUPPORTED;
}

/* Where the k loop's scalar tail stops: the planted bug drops the last term. */
static int64_t tail_end(int64_t k) { return k - PLANT_BUG; }

/* acc[r] += sum_p A[i0 + r, p] * Bp[p, j .. j+8) for r < rows: the k loop unrolled by 8,
 * then a tail loop. Bp is B packed row-major with row length n. */
static void tile_dot(__m256 acc[tile_m], int rows, const float* a, int64_t sa0, int64_t sa1,
                     const float* bp, int64_t n, int64_t j, int64_t k) {
  int64_t p = 0;
  for (; p + unroll_k <= k; p += unroll_k)
    for (int64_t q = p; q < p + unroll_k; ++q) {
      __m256 b = _mm256_loadu_ps(bp + q * n + j);
      for (int r = 0; r < rows; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(a[r * sa0 + q * sa1]), b, acc[r]);
    }
  for (; p < tail_end(k); ++p) {
    __m256 b = _mm256_loadu_ps(bp + p * n + j);
    for (int r = 0; r < rows; ++r)
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(a[r * sa0 + p * sa1]), b, acc[r]);
  }
}

/* One dst element for the columns that do not fill a vector: the same loop structure. */
static float scalar_dot(const float* a, int64_t sa1, const float* bp, int64_t n, int64_t j,
                        int64_t k) {
  float s = 0.0f;
  int64_t p = 0;
  for (; p + unroll_k <= k; p += unroll_k)
    for (int64_t q = p; q < p + unroll_k; ++q) s = fmaf(a[q * sa1], bp[q * n + j], s);
  for (; p < tail_end(k); ++p) s = fmaf(a[p * sa1], bp[p * n + j], s);
  return s;
}

static void store_row(float* c, int64_t sc1, const float* v, int count) {
  for (int e = 0; e < count; ++e) c[e * sc1] = v[e];
}

int opval_plugin_execute(const opval_problem* p, const opval_tensor* in, size_t n_in,
                         opval_tensor* out, size_t n_out, void* stream, char* error,
                         size_t error_size) {
  (void)p;
  (void)stream;
  if (n_in != 2 || n_out != 1)
    return report(1, error, error_size, "expected inputs A, B and output dst, got %zu and %zu",
                  n_in, n_out);
  if (in[0].rank != 2 || in[1].rank != 2 || out[0].rank != 2 || in[0].dtype != OPVAL_DTYPE_F32 ||
      in[1].dtype != OPVAL_DTYPE_F32 || out[0].dtype != OPVAL_DTYPE_F32)
    return report(1, error, error_size, "expected rank-2 f32 tensors");
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const float* a = (const float*)in[0].data;
  const float* b = (const float*)in[1].data;
  float* c = (float*)out[0].data;
  const int64_t sa0 = in[0].strides[0], sa1 = in[0].strides[1];
  const int64_t sc0 = out[0].strides[0], sc1 = out[0].strides[1];
  /* Packing B makes each vector load contiguous whatever B's strides are. */
  float* bp = (float*)malloc((size_t)(k * n > 0 ? k * n : 1) * sizeof(float));
  if (!bp) return report(1, error, error_size, "out of memory packing B (%lld x %lld)",
                         (long long)k, (long long)n);
  for (int64_t q = 0; q < k; ++q)
    for (int64_t j = 0; j < n; ++j) bp[q * n + j] = b[q * in[1].strides[0] + j * in[1].strides[1]];
  for (int64_t i0 = 0; i0 < m; i0 += tile_m) {
    const int rows = (int)(m - i0 < tile_m ? m - i0 : tile_m);
    const float* ai = a + i0 * sa0;
    int64_t j = 0;
    for (; j + tile_n <= n; j += tile_n) {
      __m256 acc[tile_m];
      for (int r = 0; r < tile_m; ++r) acc[r] = _mm256_setzero_ps();
      tile_dot(acc, rows, ai, sa0, sa1, bp, n, j, k);
      for (int r = 0; r < rows; ++r) {
        float v[tile_n];
        _mm256_storeu_ps(v, acc[r]);
        store_row(c + (i0 + r) * sc0 + j * sc1, sc1, v, tile_n);
      }
    }
    for (; j < n; ++j)
      for (int r = 0; r < rows; ++r)
        c[(i0 + r) * sc0 + j * sc1] = scalar_dot(ai + r * sa0, sa1, bp, n, j, k);
  }
  free(bp);
  return 0;
}
