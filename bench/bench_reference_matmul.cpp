// opval's fp64 reference GEMM against OpenBLAS dgemm at 1024^3 (or the size given), measured
// side by side in one run. Target: reference >= 25% of OpenBLAS's GFLOP/s.
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>

#include "bench_util.hpp"
#include "ops/common_gemm/reference_gemm.hpp"
#include "core/rng.hpp"

int main(int argc, char** argv) {
  // OpenBLAS 0.3.21 does not recognise this CPU and falls back to its generic Prescott
  // kernels; the fair peer is its AVX-512 (SkylakeX) kernel, chosen when the library loads.
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    execv("/proc/self/exe", argv);
  }
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<double> a(n * n), b(n * n), c1(n * n), c2(n * n);
  for (std::int64_t i = 0; i < n * n; ++i) {
    a[i] = opval::random_normal(1, 0, i);
    b[i] = opval::random_normal(1, 1, i);
  }
  auto medians = opval::bench::interleaved_medians(
      {[&] { opval::ops::matmul::reference_gemm(n, n, n, a.data(), b.data(), c1.data()); },
       [&] {
         cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n,
                     0.0, c2.data(), n);
       }},
      reps);
  double max_diff = 0;
  for (std::int64_t i = 0; i < n * n; ++i) max_diff = std::max(max_diff, std::abs(c1[i] - c2[i]));
  const double flops = 2.0 * n * n * n;
  std::printf("size                 %lld^3 fp64\n", static_cast<long long>(n));
  std::printf("opval reference     median %.4f s  %.2f GFLOP/s\n", medians[0], flops / medians[0] / 1e9);
  std::printf("OpenBLAS dgemm      median %.4f s  %.2f GFLOP/s  (%s, core %s, OPENBLAS_CORETYPE=%s)\n", medians[1],
              flops / medians[1] / 1e9, openblas_get_config(), openblas_get_corename(), std::getenv("OPENBLAS_CORETYPE"));
  std::printf("ratio opval/OpenBLAS %.2f  (target >= 0.25); max |difference| %.3g\n", medians[1] / medians[0],
              max_diff);
  return 0;
}
