#pragma once
// Wall time of the stages of a case, added into case_timings' slots; each stage is also a
// range on the profilers' timelines (core/profiler_ranges.hpp).
#include <chrono>
#include <type_traits>

#include "core/profiler_ranges.hpp"

namespace opval::detail {

using steady = std::chrono::steady_clock;

inline double seconds_since(steady::time_point start) {
  return std::chrono::duration<double>(steady::now() - start).count();
}

/// Runs `f` inside the range of phase `ph`, adds its wall time to `slot` and returns what it
/// returns.
template <class F>
auto timed(phase ph, double& slot, F&& f) {
  const profiler_range range(ph);
  auto start = steady::now();
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    slot += seconds_since(start);
  } else {
    auto r = f();
    slot += seconds_since(start);
    return r;
  }
}

}  // namespace opval::detail
