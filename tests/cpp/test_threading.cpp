// Thread control: cpulists parse and print as Linux writes them, bad ones are errors naming
// the part; pinning reaches the threads that already run and those created afterwards; the
// OpenMP thread-count scope restores the count.
#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <thread>

#include <omp.h>

#include "opval/error.hpp"
#include "core/threading.hpp"

namespace opval {
namespace {

TEST(threading, cpu_lists_parse_and_print_as_linux_writes_them) {
  EXPECT_EQ(parse_cpu_list("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(parse_cpu_list("3,1,1"), (std::vector<int>{1, 3}));
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
  EXPECT_EQ(cpu_list_text(parse_cpu_list("7")), "7");
  for (const char* bad : {"", "a", "1-", "-1", "5-2", "1,,2", "99999"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_cpu_list(bad), error);
  }
}

// Every thread: one already running before the pinning, and one started after it.
TEST(threading, pinning_reaches_running_and_later_threads) {
  const std::vector<int> original = current_affinity();
  ASSERT_FALSE(original.empty());
  const std::vector<int> one = {original.back()};
  std::atomic<bool> pinned{false};
  std::vector<int> seen_by_running;
  std::thread running([&] {
    while (!pinned.load()) std::this_thread::yield();
    seen_by_running = current_affinity();
  });
  pin_process_to(one);
  pinned = true;
  running.join();
  std::vector<int> seen_by_later;
  std::thread([&] { seen_by_later = current_affinity(); }).join();
  EXPECT_EQ(current_affinity(), one);
  EXPECT_EQ(seen_by_running, one);
  EXPECT_EQ(seen_by_later, one);
  pin_process_to(original);
  EXPECT_EQ(current_affinity(), original);
  EXPECT_THROW(pin_process_to({}), error);
}

TEST(threading, the_omp_thread_scope_restores_the_count) {
  const int before = omp_get_max_threads();
  {
    omp_threads_scope scope(before + 3);
    EXPECT_EQ(omp_get_max_threads(), before + 3);
  }
  EXPECT_EQ(omp_get_max_threads(), before);
}

}  // namespace
}  // namespace opval
