#pragma once
// A result placed on the roofline of this machine (docs/BENCHMARKING.md): the attainable
// throughput at its arithmetic intensity, min(peak FLOP/s, intensity x bandwidth), and the
// share of it the kernel reached.
#include <string>

#include "opval/dtype.hpp"
#include "bench/machine_peaks.hpp"

namespace opval {

struct roofline_place {
  std::string peak_type;        ///< the FMA peak used ("f32", ...), after the type's fallback
  double peak_gflops = 0;       ///< at the result's thread count
  std::string memory_level;     ///< the level whose bandwidth is the memory roof ("L2", "L3", "DRAM")
  double bandwidth_gbs = 0;     ///< its triad, at the result's thread count
  double attainable_gflops = 0; ///< min(peak, intensity x bandwidth)
  std::string bound;            ///< "compute" or "memory": the roof above the result
  double percent_of_roof = 0;   ///< gflops / attainable, in %
  double percent_of_bandwidth = 0;  ///< GB/s reached / bandwidth, in %
};

/// The peak type for kernels that multiply in `math`: f64, f32 (also tf32 and the fp8 types,
/// which CPUs convert to f32), bf16, f16, int8; a type this machine has no peak for falls back to f32.
std::string peak_type_for(dtype math, const machine_peaks& p);

/// Places a result of `gflops` and `gbytes_per_second` at `intensity` FLOP/byte, run on
/// `threads` threads: the peaks are interpolated per thread, one-thread figure x threads, capped
/// at the all-threads figure. The memory roof is the bandwidth of the smallest level that holds
/// the `working_set` (bytes) at that thread count, hot; DRAM's when `cold` (caches flushed).
roofline_place place_on_roofline(const machine_peaks& p, dtype math, int threads, double gflops,
                                 double gbytes_per_second, double intensity, double working_set, bool cold);

}  // namespace opval
