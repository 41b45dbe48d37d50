#pragma once
// One benchmark case (docs/BENCHMARKING.md): the case is first run and judged as `opval run`
// does; only a case that PASSED is timed, so a wrong kernel's speed is never reported. Then its
// kernel (execute + synchronize, after one prepare) is sampled, hot or cold, and the median
// is turned into GFLOP/s and GB/s from the op's counts.
#include <string>
#include <utility>
#include <vector>

#include <optional>

#include "opval/backend.hpp"
#include "bench/hardware_counters.hpp"
#include "bench/machine_peaks.hpp"
#include "bench/roofline.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"
#include "bench/sampler.hpp"

namespace opval {

enum class cache_mode {
  hot,   ///< the same buffers every call, batched: the kernel at its best
  cold,  ///< the caches flushed before every sample, one call per sample
};

struct bench_options {
  run_options check;           ///< how the correctness check runs (seed, policy, memory checks)
  sampling_options sampling;
  cache_mode cache = cache_mode::hot;
  std::size_t flush_bytes = 0; ///< cold mode's flush buffer; 0 = twice the last-level cache
  int threads = 0;             ///< OpenMP threads while timing; 0 = as they are
  int repetitions = 1;         ///< independent samplings of the case, pooled (sample_repeated)
  bool counters = false;       ///< after the timing, count events over ~50 ms of calls (perf_event_open)
  const machine_peaks* peaks = nullptr;  ///< this machine's peaks: each result placed on its roofline
};

struct bench_result {
  case_result check;           ///< the correctness verdict, with the case's identity
  bool timed = false;          ///< true only when the check PASSED
  sampling_result timing;
  op_counts counts;
  double gflops = 0;           ///< counts.flops / median / 1e9
  double gbytes_per_second = 0;///< counts.bytes / median / 1e9
  double intensity = 0;        ///< flops per byte
  std::string cache;           ///< "hot", or "cold (flushing 600 MiB)"
  int threads = 0;             ///< OpenMP's thread count while timing
  std::string affinity;        ///< the CPUs the timing ran on ("0-1")
  std::optional<counter_result> counters;  ///< when asked for: per-call event counts, or why none
  std::optional<roofline_place> roofline;  ///< with the machine's peaks: the result on its roofline
  std::vector<std::pair<std::string, std::string>> sweep;  ///< a sweep's point (axis, value); empty outside sweeps
};

/// Times p on b after its correctness check `check` (a run_case result, perhaps from a worker
/// process): nothing is timed unless it PASSED. Throws opval::error on bad sampling options.
bench_result time_case(const problem& p, backend& b, case_result check, const bench_options& o);

/// Checks p on b in this process (run_case with o.check), then time_case.
bench_result bench_case(const problem& p, backend& b, const bench_options& o);

}  // namespace opval
