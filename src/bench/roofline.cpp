#include "bench/roofline.hpp"

#include <algorithm>

namespace opval {
namespace {

/// A figure at `threads` threads: the one-thread figure times threads, capped at all threads'.
double at_threads(const per_threads& p, int threads) {
  return std::min(p.one * std::max(threads, 1), std::max(p.all, p.one));
}

}  // namespace

std::string peak_type_for(dtype math, const machine_peaks& p) {
  std::string type = "f32";
  switch (math) {
    case dtype::f64: type = "f64"; break;
    case dtype::bf16: type = "bf16"; break;
    case dtype::f16: type = "f16"; break;
    case dtype::i8:
    case dtype::u8: type = "int8"; break;
    default: break;  // f32, tf32, the fp8 types (converted to f32 on CPUs), and the rest
  }
  return p.gflops.contains(type) ? type : "f32";
}

/// The smallest level holding `working_set` bytes on `threads` threads; DRAM when none does.
const memory_level& level_holding(const machine_peaks& p, double working_set, int threads) {
  const double cpus = std::clamp(threads, 1, std::max(p.logical_cpus, 1));
  for (const memory_level& level : p.levels)
    if (level.bytes_per_cpu > 0 && working_set <= static_cast<double>(level.bytes_per_cpu) * cpus) return level;
  return p.dram();
}

roofline_place place_on_roofline(const machine_peaks& p, dtype math, int threads, double gflops,
                                 double gbytes_per_second, double intensity, double working_set, bool cold) {
  roofline_place r;
  r.peak_type = peak_type_for(math, p);
  if (const auto it = p.gflops.find(r.peak_type); it != p.gflops.end()) r.peak_gflops = at_threads(it->second, threads);
  const memory_level& level = cold ? p.dram() : level_holding(p, working_set, threads);
  r.memory_level = level.name;
  r.bandwidth_gbs = at_threads(level.triad_gbs, threads);
  const double memory_roof = intensity * r.bandwidth_gbs;
  r.bound = intensity > 0 && memory_roof < r.peak_gflops ? "memory" : "compute";
  r.attainable_gflops = intensity > 0 ? std::min(r.peak_gflops, memory_roof) : r.peak_gflops;
  r.percent_of_roof = r.attainable_gflops > 0 ? 100 * gflops / r.attainable_gflops : 0;
  r.percent_of_bandwidth = r.bandwidth_gbs > 0 ? 100 * gbytes_per_second / r.bandwidth_gbs : 0;
  return r;
}

}  // namespace opval
