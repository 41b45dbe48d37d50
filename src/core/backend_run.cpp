// The three-step run of a backend (prepare, execute, synchronize), timed so that a case's
// kernel time excludes primitive creation, kernel builds and uploads, and measured so that
// the kernel's heap use (execute + synchronize) is told apart from the set-up's (prepare).
#include <chrono>

#include <fmt/format.h>

#include "core/backend_run.hpp"
#include "core/heap_stats.hpp"
#include "core/profiler_ranges.hpp"
#include "opval/backend.hpp"

namespace opval {

execution_info run_backend(backend& b, const problem& p, std::span<const tensor> in, std::span<tensor> out,
                           backend_run_times* times) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  // Each range encloses its heap section: a collector that allocates is not the backend's use.
  std::optional<detail::profiler_range> range(std::in_place, detail::phase::prepare);
  heap_section prepare_heap;
  b.prepare(p, in, out);
  const heap_stats prepare_stats = prepare_heap.finish();
  range.emplace(detail::phase::kernel);
  const std::optional<std::int64_t> rss0 = resident_bytes();
  const auto t1 = clock::now();
  heap_section kernel_heap;
  execution_info info = b.execute(p, in, out);
  const std::optional<double> device = b.synchronize(out);
  const heap_stats kernel_stats = kernel_heap.finish();
  const auto t2 = clock::now();
  range.reset();
  const std::optional<std::int64_t> rss1 = resident_bytes();
  if (times) {
    times->prepare += std::chrono::duration<double>(t1 - t0).count();
    times->kernel += std::chrono::duration<double>(t2 - t1).count();
    if (device) times->device_kernel = times->device_kernel.value_or(0) + *device;
    times->memory.prepare = prepare_stats;
    times->memory.kernel = kernel_stats;
    if (rss0 && rss1) times->memory.kernel_rss_delta = *rss1 - *rss0;
  }
  return info;
}

leak_check check_leaks(backend& b, const problem& p, std::span<const tensor> in, std::span<tensor> out, int runs) {
  if (runs <= 0) return {};
  if (const std::string& why = heap_hooks_unavailable_reason(); !why.empty()) {
    leak_check none;
    none.finding = "not checked: " + why;
    return none;
  }
  std::vector<heap_stats> stats;
  stats.reserve(runs);  // no allocation of ours inside the sections
  for (int i = 0; i < runs; ++i) {
    // One section over the whole run, execute's result released inside it: what a run
    // leaves behind is what the backend keeps.
    heap_section run;
    try {
      b.prepare(p, in, out);
      (void)b.execute(p, in, out);
      (void)b.synchronize(out);
    } catch (const declined& d) {
      // The verdict stands on the runs before; a rerun the kernel declines measures nothing.
      (void)run.finish();
      leak_check none;
      none.finding = fmt::format("not checked: the kernel declined rerun {}: {}", i + 1, d.what());
      return none;
    }
    stats.push_back(run.finish());
  }
  return judge_leaks(stats);
}

}  // namespace opval
