// All comparison metrics over 2^26 f32 elements against the machine's memory copy bandwidth,
// measured in the same run. Target (issue 19): compare throughput >= 80% of copy bandwidth, both counted
// STREAM-style as bytes read + bytes written per second.
#include <cstdio>
#include <cstring>

#include "bench_util.hpp"
#include "core/compare.hpp"
#include "core/fill.hpp"

int main(int argc, char** argv) {
  using namespace opval;
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : (std::int64_t{1} << 26);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  tensor got(dtype::f32, {n}), ref(dtype::f64, {n}), bound(dtype::f64, {n}), compute(dtype::f64, {n});
  fill_tensor(ref, {fill_kind::normal}, 1, 0);
  {
    const double* r = ref.data_as<double>();
    float* g = got.data_as<float>();
    double* b = bound.data_as<double>();
    double* c = compute.data_as<double>();
#pragma omp parallel for
    for (std::int64_t i = 0; i < n; ++i) {
      g[i] = static_cast<float>(r[i]);
      c[i] = 1e-9;
      b[i] = 1e-7 * std::abs(r[i]) + 1e-9;
    }
  }
  // The copy peer moves as many bytes as the comparison reads.
  const std::size_t bytes = n * (4 + 8 + 8 + 8);
  std::vector<char> src(bytes / 2), dst(bytes / 2);
  std::memset(src.data(), 1, src.size());
  std::memset(dst.data(), 2, dst.size());
  compare_input in{&got, &ref, &bound, &compute, dtype::f32, 5};
  metrics m;
  auto medians = bench::interleaved_medians(
      {[&] { m = compare_outputs(in); },
       [&] {
#pragma omp parallel for
         for (int part = 0; part < 64; ++part) {
           std::size_t chunk = src.size() / 64;
           std::memcpy(dst.data() + part * chunk, src.data() + part * chunk, chunk);
         }
       }},
      reps);
  double compare_bw = bytes / medians[0] / 1e9;
  double copy_bw = bytes / medians[1] / 1e9;  // read half + write half = `bytes` moved
  std::printf("elements            %lld (f32 got, f64 reference, bound, compute bound)\n", static_cast<long long>(n));
  std::printf("compare_outputs     median %.3f s  %.2f GB/s read\n", medians[0], compare_bw);
  std::printf("memcpy (2 threads)  median %.3f s  %.2f GB/s read+written\n", medians[1], copy_bw);
  std::printf("ratio compare/copy  %.2f  (target >= 0.80)\n", compare_bw / copy_bw);
  std::printf("(max ulps %.3g, beyond bound %lld)\n", m.max_ulps, static_cast<long long>(m.beyond_bound));
  return 0;
}
