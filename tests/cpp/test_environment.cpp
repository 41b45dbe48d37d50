// The environment stored with benchmark results: this Linux machine's CPU, caches, memory,
// OS and build are read; the steering variables that are set are captured; the load warning
// follows the load average against what the run itself accounts for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "bench/environment.hpp"

namespace opval {
namespace {

TEST(environment, this_machine_is_described) {
  const environment e = capture_environment();
  EXPECT_FALSE(e.cpu_model.empty());
  EXPECT_GE(e.logical_cpus, 1);
  EXPECT_GT(e.memory_bytes, std::uint64_t{1} << 28);
  EXPECT_TRUE(e.kernel.starts_with("Linux ")) << e.kernel;
  EXPECT_FALSE(e.os.empty());
  EXPECT_FALSE(e.opval_version.empty());
  EXPECT_FALSE(e.git_sha.empty());
  EXPECT_FALSE(e.compiler.empty());
  EXPECT_FALSE(e.build_type.empty());
  EXPECT_FALSE(e.governor.empty());
  EXPECT_TRUE(e.boost == "on" || e.boost == "off" || e.boost == "not readable") << e.boost;
#if defined(__x86_64__)
  EXPECT_NE(std::find(e.cpu_flags.begin(), e.cpu_flags.end(), "sse2"), e.cpu_flags.end());
#endif
  ASSERT_FALSE(e.caches.empty()) << "sysfs lists CPU 0's caches on Linux";
  EXPECT_EQ(e.caches.front().level, 1);
  EXPECT_GT(e.caches.back().bytes, e.caches.front().bytes);
}

TEST(environment, steering_variables_that_are_set_are_captured) {
  ::setenv("OMP_NUM_THREADS", "3", 1);
  ::setenv("OPENBLAS_VERBOSE", "2", 1);
  ::unsetenv("OMP_PROC_BIND");
  const environment e = capture_environment();
  EXPECT_EQ(e.variables.at("OMP_NUM_THREADS"), "3");
  EXPECT_EQ(e.variables.at("OPENBLAS_VERBOSE"), "2");
  EXPECT_FALSE(e.variables.contains("OMP_PROC_BIND"));
  EXPECT_FALSE(e.variables.contains("HOME")) << "only the variables that steer threads and libraries";
}

TEST(environment, other_load_is_a_warning) {
  auto warns_of_load = [](const environment& e) {
    return std::any_of(e.warnings.begin(), e.warnings.end(), [](const std::string& w) { return w.starts_with("other load"); });
  };
  const environment quiet = capture_environment(1e9);  // the run accounts for any load
  ASSERT_GE(quiet.load_average, 0) << "/proc/loadavg is readable on Linux";
  EXPECT_FALSE(warns_of_load(quiet));
  const environment busy = capture_environment(-1000);  // as if the machine had 1000 more runnable tasks
  EXPECT_TRUE(warns_of_load(busy));
}

}  // namespace
}  // namespace opval
