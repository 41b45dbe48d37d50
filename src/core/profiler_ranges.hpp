#pragma once
// The hand-off to profilers (docs/PROFILING.md): named ranges on their timelines, and the
// measured region, the only span in which they collect when told to wait for it.
//
// Each case is a range named after its descriptor; inside it, each phase is a range named
// "opval/<phase>". They are NVTX ranges (Nsight Systems) and ITT tasks (VTune), each compiled
// in when its headers were found (OPVAL_PROFILER_RANGES) and a no-op when no collector is
// loaded: the cost is then one test of a pointer.
//
// The measured region is opval bench's timed loop of kernel calls ("opval/timing"): there, and
// only there, VTune's collection is resumed (ITT, for `vtune -start-paused`) and perf's
// counters are enabled (perf's control protocol, through $OPVAL_PERF_CONTROL, for
// `perf stat|record --delay=-1 --control=...`). Nsight Systems starts its capture on that range.
#include <string>
#include <string_view>

namespace opval::detail {

/// The stages of a case that profilers see as ranges.
enum class phase { fill, prepare, kernel, reference, bound, compare, timing };

/// The range's name: "opval/fill", "opval/prepare", ..., "opval/timing".
std::string_view range_name(phase p);

/// A range open on the calling thread for this object's lifetime.
class profiler_range {
 public:
  explicit profiler_range(phase p) noexcept;
  /// A case's range, named after the case (its descriptor).
  explicit profiler_range(const std::string& case_name) noexcept;
  ~profiler_range();
  profiler_range(const profiler_range&) = delete;
  profiler_range& operator=(const profiler_range&) = delete;
};

/// The measured region: the range "opval/timing", with the profilers' collection on for its
/// lifetime (resumed on entry, paused again on exit).
class measured_region {
 public:
  measured_region();
  ~measured_region();
  measured_region(const measured_region&) = delete;
  measured_region& operator=(const measured_region&) = delete;

 private:
  profiler_range range_{phase::timing};
};

/// An untimed step inside a measured region that is not the kernel (a cache flush between
/// samples, the stopping rule): collection is off for its lifetime. Outside a measured region,
/// and with no collector to tell, it does nothing.
class unmeasured_step {
 public:
  unmeasured_step();
  ~unmeasured_step();
  unmeasured_step(const unmeasured_step&) = delete;
  unmeasured_step& operator=(const unmeasured_step&) = delete;

 private:
  bool paused_ = false;
};

/// The profiler interfaces this build has: "nvtx itt", "nvtx", "itt" or "none".
std::string_view profiler_interfaces();

}  // namespace opval::detail
