// perf_event_open counters, through the software events every Linux allows (this VM exposes
// no hardware counters: the hardware path is checked for its clear refusal here, and for its
// counts where a PMU answers): task-clock over a spin, context switches over sleeps, threads
// started during the count and threads that already ran, and a refused event's error.
#include <gtest/gtest.h>

#include <linux/perf_event.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "opval/error.hpp"
#include "bench/hardware_counters.hpp"

namespace opval {
namespace {

double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Spins until this thread has used `seconds` of CPU time (task-clock counts CPU time, which a
/// loaded machine hands out more slowly than the wall clock runs).
void spin_for(double seconds) {
  const double end = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < end) {
  }
}

counter_event software(const std::string& name) {
  for (const counter_event& e : software_events())
    if (e.name == name) return e;
  throw std::logic_error("no software event " + name);
}

TEST(hardware_counters, task_clock_counts_a_spin_and_context_switches_count_sleeps) {
  counter_set set({software("task-clock-ns"), software("context-switches")});
  set.start();
  spin_for(0.03);
  for (int i = 0; i < 10; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::vector<double> counts = set.stop();
  EXPECT_GE(counts[0], 0.025e9) << "task-clock in ns";
  EXPECT_LE(counts[0], 1.0e9);
  EXPECT_GE(counts[1], 10) << "each sleep gives the CPU up";
  // Stopped counters stay still; a restart resets them.
  spin_for(0.01);
  set.start();
  const std::vector<double> again = set.stop();
  EXPECT_LT(again[0], 0.005e9);
}

TEST(hardware_counters, threads_of_the_process_are_counted_old_and_new) {
  std::atomic<bool> go{false};
  std::thread existing([&] {
    while (!go) std::this_thread::sleep_for(std::chrono::microseconds(200));
    spin_for(0.03);
  });
  counter_set set({software("task-clock-ns")});
  set.start();
  go = true;
  std::thread started([] { spin_for(0.03); });
  started.join();
  existing.join();
  const double ns = set.stop()[0];
  EXPECT_GE(ns, 0.055e9) << "both threads' 30 ms spins";
}

TEST(hardware_counters, hardware_events_are_counted_or_refused_with_a_reason) {
  std::uint64_t x = 1;
  const counter_result r = count_events([&] {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ull + 1;
    asm volatile("" : "+r"(x));
  }, {}, 100);
  EXPECT_EQ(r.calls, 100u);
  if (r.hardware) {
    ASSERT_EQ(r.per_call[0].first, "cycles");
    EXPECT_GT(r.per_call[0].second, 1e5) << "100000 dependent multiply-adds take more cycles than that";
    EXPECT_GT(r.per_call[1].second, 2e5) << "and at least two instructions each";
    EXPECT_GT(r.ipc, 0);
    EXPECT_TRUE(r.unavailable.empty());
  } else {
    EXPECT_NE(r.unavailable.find("perf_event_open(cycles)"), std::string::npos) << r.unavailable;
    EXPECT_EQ(r.ipc, 0);
    ASSERT_EQ(r.per_call[0].first, "task-clock-ns");
    EXPECT_GT(r.per_call[0].second, 1e4) << "per call, ns";
  }
  // The step between calls is not counted: 100 sleeps of 1 ms would add 100 context switches.
  const counter_result paused = count_events([] {}, [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }, 100);
  const auto switches = std::find_if(paused.per_call.begin(), paused.per_call.end(),
                                     [](const auto& e) { return e.first == "context-switches"; });
  ASSERT_NE(switches, paused.per_call.end());
  EXPECT_LT(switches->second, 0.5);
}

TEST(hardware_counters, a_refused_event_is_an_error_naming_it) {
  try {
    counter_set set({{"no-such-event", PERF_TYPE_SOFTWARE, 9999}});
    FAIL() << "a software event numbered 9999 opened";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("perf_event_open(no-such-event)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace opval
