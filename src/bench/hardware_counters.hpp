#pragma once
// Hardware (and software) event counts of a kernel through Linux's perf_event_open
// (docs/BENCHMARKING.md, "Hardware counters"): cycles, instructions, cache references and
// misses, and IPC, where the kernel and the machine allow them; where they do not (a VM that
// exposes no PMU, perf_event_paranoid, a seccomp filter), a reason saying so, never a zero.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace opval {

/// One event perf_event_open can count: its perf type and config (linux/perf_event.h).
struct counter_event {
  std::string name;    ///< "cycles", "instructions", "context-switches", ...
  std::uint32_t type;  ///< PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, ...
  std::uint64_t config;
};

/// cycles, instructions, cache-references, cache-misses (the last-level cache).
std::vector<counter_event> hardware_events();
/// task-clock (ns), page-faults, context-switches, cpu-migrations: the kernel keeps these
/// everywhere perf_event_open is allowed at all.
std::vector<counter_event> software_events();

/// Counts of `events` over a stretch of this process's work: opened for every thread the
/// process has (OpenMP's pool included) and for the threads they start, user space only.
class counter_set {
 public:
  /// Throws opval::error naming the event and the OS's reason when one cannot be opened.
  explicit counter_set(std::vector<counter_event> events);
  ~counter_set();
  counter_set(const counter_set&) = delete;
  counter_set& operator=(const counter_set&) = delete;

  void start();  ///< resets and enables every counter
  void pause();  ///< stops counting, keeping the counts
  void resume(); ///< counts on from where pause() left them
  /// Disables them and returns each event's total over the threads, scaled up by
  /// enabled / running time where the PMU multiplexed it.
  std::vector<double> stop();
  const std::vector<counter_event>& events() const { return events_; }

 private:
  std::vector<counter_event> events_;
  std::vector<std::vector<int>> fds_;  // [event][thread]
};

/// Per-call event counts of a kernel.
struct counter_result {
  bool hardware = false;       ///< the hardware events were counted
  std::string unavailable;     ///< why they were not ("" when they were)
  std::uint64_t calls = 0;     ///< kernel calls counted over
  std::vector<std::pair<std::string, double>> per_call;  ///< each counted event, per call
  double ipc = 0;              ///< instructions / cycles (hardware only)
};

/// Runs `kernel` `calls` times under the hardware and software events, or, where the hardware
/// ones cannot be opened, under the software ones alone with `unavailable` saying why. `between`,
/// when set, runs before every call with the counters paused (the cold-cache flush). Throws
/// opval::error only when no event at all can be opened.
counter_result count_events(const std::function<void()>& kernel, const std::function<void()>& between,
                            std::uint64_t calls);

}  // namespace opval
