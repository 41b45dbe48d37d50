#include "bench/bench.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include <omp.h>

#include "bench/cache_flush.hpp"
#include "core/profiler_ranges.hpp"
#include "opval/error.hpp"
#include "core/threading.hpp"

namespace opval {
namespace {

/// The derived figures of a timed case.
void derive(bench_result& r) {
  const double median = r.timing.summary.median;
  if (median <= 0) return;
  r.gflops = r.counts.flops / median / 1e9;
  r.gbytes_per_second = r.counts.bytes / median / 1e9;
  r.intensity = r.counts.bytes > 0 ? r.counts.flops / r.counts.bytes : 0;
}

/// Events over about 50 ms of calls (one at least), after the timing, so that counting does
/// not disturb it. Where no event can be opened at all, the result says why.
counter_result count_case(const std::function<void()>& kernel, const std::function<void()>& between, double median) {
  const auto calls = static_cast<std::uint64_t>(std::clamp(std::llround(0.05 / median), 1LL, 1000000000LL));
  try {
    return count_events(kernel, between, calls);
  } catch (const error& e) {
    counter_result none;
    none.unavailable = e.what();
    return none;
  }
}

}  // namespace

bench_result bench_case(const problem& p, backend& b, const bench_options& o) {
  return time_case(p, b, run_case(p, b, o.check), o);
}

bench_result time_case(const problem& p, backend& b, case_result check, const bench_options& o) {
  bench_result r;
  r.check = std::move(check);
  r.cache = o.cache == cache_mode::hot ? "hot" : "cold";
  if (r.check.v.st != state::passed) return r;  // a wrong (or skipped) kernel has no speed

  const detail::profiler_range case_range(r.check.descriptor);
  const op_spec& spec = p.spec();
  r.counts = spec.counts(p);
  std::vector<tensor> ins = allocate(spec.inputs(p));
  std::vector<tensor> outs = allocate(spec.outputs(p));
  std::span<tensor> in_span(ins);
  {
    const detail::profiler_range range(detail::phase::fill);
    spec.fill(p, o.check.seed, in_span);
  }
  {
    const detail::profiler_range range(detail::phase::prepare);
    b.prepare(p, ins, outs);  // set-up (primitive creation, uploads) is not the kernel's time
  }
  auto kernel = [&] {
    b.execute(p, ins, outs);
    b.synchronize(outs);
  };
  sampling_options sampling = o.sampling;
  std::unique_ptr<cache_flusher> flusher;
  std::function<void()> between;
  if (o.cache == cache_mode::cold) {
    flusher = std::make_unique<cache_flusher>(o.flush_bytes);
    between = [&] { flusher->flush(); };
    sampling.min_sample_seconds = 1e-12;  // one call per sample: a second call would find warm caches
    r.cache = fmt::format("cold (flushing {} MiB)", flusher->bytes() >> 20);
  }
  std::optional<omp_threads_scope> threads;
  std::optional<int> pool_before;  // the backend's own pool (OpenBLAS's), restored after the timing
  if (o.threads > 0) {
    threads.emplace(o.threads);
    pool_before = b.set_threads(o.threads);
  }
  r.threads = omp_get_max_threads();
  r.affinity = cpu_list_text(current_affinity());
  r.timing = sample_repeated(kernel, between, sampling, o.repetitions);
  r.timed = true;
  derive(r);
  if (o.peaks)
    r.roofline = place_on_roofline(*o.peaks, p.dt.math, r.threads, r.gflops, r.gbytes_per_second, r.intensity,
                                   r.counts.bytes, o.cache == cache_mode::cold);
  if (o.counters) r.counters = count_case(kernel, between, r.timing.summary.median);
  if (pool_before) b.set_threads(*pool_before);
  return r;
}

}  // namespace opval
