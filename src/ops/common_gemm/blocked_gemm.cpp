#include "ops/common_gemm/blocked_gemm.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace opval::ops::common_gemm {
namespace {

// Register tile: MR rows of C by NR columns (3 AVX-512 vectors): 24 accumulators.
constexpr std::int64_t mr = 8, nr = 24;
// Cache blocks: a kc x nr micro-panel of B (36 KiB) stays in L1 while the mc x kc block of A
// (384 KiB) stays in L2 and is reused across every panel of B.
constexpr std::int64_t kc_block = 192, mc_block = 32 * mr;

using micro_kernel = void (*)(std::int64_t kc, const double* ap, const double* bp, double* c,
                              std::int64_t ldc, bool accumulate);

__attribute__((target("avx512f")))
void micro_avx512(std::int64_t kc, const double* ap, const double* bp, double* c, std::int64_t ldc,
                  bool accumulate) {
  __m512d acc[mr][3];
#pragma GCC unroll 8
  for (int i = 0; i < mr; ++i) acc[i][0] = acc[i][1] = acc[i][2] = _mm512_setzero_pd();
  for (std::int64_t p = 0; p < kc; ++p) {
    const __m512d b0 = _mm512_load_pd(bp), b1 = _mm512_load_pd(bp + 8), b2 = _mm512_load_pd(bp + 16);
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) {
      const __m512d av = _mm512_set1_pd(ap[i]);
      acc[i][0] = _mm512_fmadd_pd(av, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_pd(av, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_pd(av, b2, acc[i][2]);
    }
    ap += mr;
    bp += nr;
  }
#pragma GCC unroll 8
  for (int i = 0; i < mr; ++i) {
    double* ci = c + i * ldc;
    for (int j = 0; j < 3; ++j) {
      __m512d v = acc[i][j];
      if (accumulate) v = _mm512_add_pd(v, _mm512_loadu_pd(ci + 8 * j));
      _mm512_storeu_pd(ci + 8 * j, v);
    }
  }
}

// AVX2 has 16 vector registers, too few for the 8 x 24 tile at once: it is computed as four
// 4 x 12 sub-tiles (12 accumulators, 3 B vectors, 1 broadcast), each over the whole kc. Every
// element is still one fma per k in order, so the result is bit-identical to the AVX-512
// kernel's: the fp64 reference, and the golden records built on it, do not depend on the ISA.
__attribute__((target("avx2,fma")))
void micro_avx2(std::int64_t kc, const double* ap, const double* bp, double* c, std::int64_t ldc,
                bool accumulate) {
  constexpr int rows = 4, vectors = 3;
  for (int r0 = 0; r0 < mr; r0 += rows) {
    for (int c0 = 0; c0 < nr; c0 += 4 * vectors) {
      __m256d acc[rows][vectors];
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < vectors; ++j) acc[i][j] = _mm256_setzero_pd();
      const double* a = ap + r0;
      const double* b = bp + c0;
      for (std::int64_t p = 0; p < kc; ++p, a += mr, b += nr) {
        const __m256d b0 = _mm256_load_pd(b), b1 = _mm256_load_pd(b + 4), b2 = _mm256_load_pd(b + 8);
        for (int i = 0; i < rows; ++i) {
          const __m256d av = _mm256_broadcast_sd(a + i);
          acc[i][0] = _mm256_fmadd_pd(av, b0, acc[i][0]);
          acc[i][1] = _mm256_fmadd_pd(av, b1, acc[i][1]);
          acc[i][2] = _mm256_fmadd_pd(av, b2, acc[i][2]);
        }
      }
      for (int i = 0; i < rows; ++i) {
        double* ci = c + (r0 + i) * ldc + c0;
        for (int j = 0; j < vectors; ++j) {
          __m256d v = acc[i][j];
          if (accumulate) v = _mm256_add_pd(v, _mm256_loadu_pd(ci + 4 * j));
          _mm256_storeu_pd(ci + 4 * j, v);
        }
      }
    }
  }
}

// Without vector FMA: std::fma keeps the one rounding per term of the vector kernels.
void micro_generic(std::int64_t kc, const double* ap, const double* bp, double* c, std::int64_t ldc,
                   bool accumulate) {
  double acc[mr][nr] = {};
  for (std::int64_t p = 0; p < kc; ++p, ap += mr, bp += nr)
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nr; ++j) acc[i][j] = std::fma(ap[i], bp[j], acc[i][j]);
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}

micro_kernel pick_kernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return micro_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return micro_avx2;
  return micro_generic;
}

// Packs rows [i0, i0+mc) x columns [p0, p0+kc) of A into mr-row micro-panels, zero-padded.
void pack_a(const double* a, std::int64_t rsa, std::int64_t csa, std::int64_t i0, std::int64_t mc,
            std::int64_t p0, std::int64_t kc, double* out) {
  for (std::int64_t ir = 0; ir < mc; ir += mr) {
    double* panel = out + ir * kc;
    const std::int64_t rows = std::min(mr, mc - ir);
    for (std::int64_t p = 0; p < kc; ++p)
      for (std::int64_t i = 0; i < mr; ++i)
        panel[p * mr + i] = i < rows ? a[(i0 + ir + i) * rsa + (p0 + p) * csa] : 0.0;
  }
}

// Packs rows [p0, p0+kc) x columns [j0 + jr, ...) of B for one nr-column micro-panel.
void pack_b_panel(const double* b, std::int64_t rsb, std::int64_t csb, std::int64_t p0,
                  std::int64_t kc, std::int64_t j0, std::int64_t cols, double* panel) {
  for (std::int64_t p = 0; p < kc; ++p)
    for (std::int64_t j = 0; j < nr; ++j)
      panel[p * nr + j] = j < cols ? b[(p0 + p) * rsb + (j0 + j) * csb] : 0.0;
}

// One mr x nr tile of C; edge tiles go through a local buffer.
void run_tile(micro_kernel kern, std::int64_t kc, const double* ap, const double* bp, double* c,
              std::int64_t ldc, std::int64_t rows, std::int64_t cols, bool accumulate) {
  if (rows == mr && cols == nr) return kern(kc, ap, bp, c, ldc, accumulate);
  alignas(64) double tile[mr * nr];
  kern(kc, ap, bp, tile, nr, false);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * nr + j] : tile[i * nr + j];
}

template <class T>
struct aligned_buffer {
  explicit aligned_buffer(std::size_t n)
      : p(static_cast<T*>(::operator new(std::max<std::size_t>(n, 1) * sizeof(T), std::align_val_t(64)))) {}
  ~aligned_buffer() { ::operator delete(p, std::align_val_t(64)); }
  aligned_buffer(const aligned_buffer&) = delete;
  aligned_buffer& operator=(const aligned_buffer&) = delete;
  T* p;
};

}  // namespace

void reference_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                    std::int64_t rsa, std::int64_t csa, const double* b, std::int64_t rsb,
                    std::int64_t csb, double* c, std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (std::int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0);
    return;
  }
  static const micro_kernel kern = pick_kernel();
  // Tasks are (mc-row block, column chunk) tiles of C, taken dynamically. A task packs the A
  // block it needs and each B micro-panel right before use, so tasks share nothing and no
  // barrier separates them: on a shared, busy machine a descheduled thread only delays its
  // own task while the other thread takes the rest.
  const std::int64_t panels = (n + nr - 1) / nr;
  const std::int64_t row_blocks = (m + mc_block - 1) / mc_block;
  const bool parallel = !omp_in_parallel() && m * n * k > 64 * 64 * 64;
  const std::int64_t threads = parallel ? omp_get_max_threads() : 1;
  const std::int64_t col_chunks = std::min(panels, std::max<std::int64_t>(1, (4 * threads + row_blocks - 1) / row_blocks));
  const std::int64_t chunk_panels = (panels + col_chunks - 1) / col_chunks;
  const std::int64_t kc_max = std::min(kc_block, k);

#pragma omp parallel if (parallel)
  {
    aligned_buffer<double> apack(mc_block * kc_max), bpack(nr * kc_max);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t task = 0; task < row_blocks * col_chunks; ++task) {
      const std::int64_t i0 = task / col_chunks * mc_block, mc = std::min(mc_block, m - i0);
      const std::int64_t jp0 = task % col_chunks * chunk_panels, jp1 = std::min(panels, jp0 + chunk_panels);
      for (std::int64_t p0 = 0; p0 < k; p0 += kc_block) {
        const std::int64_t kc = std::min(kc_block, k - p0);
        pack_a(a, rsa, csa, i0, mc, p0, kc, apack.p);
        for (std::int64_t jp = jp0; jp < jp1; ++jp) {
          const std::int64_t cols = std::min(nr, n - jp * nr);
          pack_b_panel(b, rsb, csb, p0, kc, jp * nr, cols, bpack.p);
          for (std::int64_t i = 0; i < mc; i += mr)
            run_tile(kern, kc, apack.p + i * kc, bpack.p, c + (i0 + i) * ldc + jp * nr, ldc,
                     std::min(mr, mc - i), cols, p0 > 0);
        }
      }
    }
  }
}

}  // namespace opval::ops::common_gemm
