// The LeakSanitizer policy of tests/sanitizers/lsan.supp, tested (docs/SAFETY.md, "Sanitizers"):
// its suppression hides PoCL's own leak on a kernel-cache miss and nothing that opval's code
// leaks, including an OpenCL buffer that opval's code forgets to release (which PoCL allocates,
// so a suppression by library would hide it). The test runs this binary's planted_leaks case in
// a child process with a fresh, empty PoCL kernel cache and reads LeakSanitizer's report.
// Skipped outside the asan-ubsan build, and without an OpenCL device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "backend_testing.hpp"
#include "cli_testing.hpp"
#include "opval/runner.hpp"
#ifdef OPVAL_HAVE_OPENCL
#include <CL/cl.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
constexpr bool built_with_asan = true;
#else
constexpr bool built_with_asan = false;
#endif

namespace {

namespace fs = std::filesystem;

constexpr const char* device_probe = "matmul m=4 n=4 k=4 dt=f32";

// Loses its pointer through a volatile store, so that the compiler cannot elide the allocation.
void* volatile sink = nullptr;

// The leak of opval's own code that the suppressions must never hide: heap memory allocated
// by opval and lost.
[[gnu::noinline]] void planted_heap_leak() {
  sink = new std::vector<double>(1000, 1.0);
  sink = nullptr;
}

#ifdef OPVAL_HAVE_OPENCL
// The OpenCL bug a backend can have: a buffer created and never released (no
// clReleaseMemObject). PoCL allocates it, so its stack starts inside libpocl.
[[gnu::noinline]] void planted_opencl_leak() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  ASSERT_EQ(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), CL_SUCCESS);
  cl_int status = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  sink = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, nullptr, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  sink = nullptr;
  clReleaseContext(ctx);  // the buffer keeps it alive: the buffer is what leaks
}
#endif

// The child: one OpenCL case compiled on the (empty) kernel cache the parent gave it, which
// makes PoCL leak, then the two planted leaks. Run only by lsan_policy.planted_leaks_are_reported.
TEST(lsan_policy, DISABLED_planted_leaks) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  const opval::case_result r = opval::run_case(opval::parse_problem("softmax shape=3x17 dt=f32"), *b, {});
  ASSERT_EQ(r.v.st, opval::state::passed) << r.v.reason;
  planted_heap_leak();
#ifdef OPVAL_HAVE_OPENCL
  planted_opencl_leak();
#endif
}

// The "Direct leak ..." blocks of a LeakSanitizer report, each with its stack.
std::vector<std::string> direct_leaks(const std::string& report) {
  std::vector<std::string> blocks;
  std::istringstream in(report);
  std::string line;
  std::string* current = nullptr;
  while (std::getline(in, line)) {
    if (line.rfind("Direct leak", 0) == 0 || line.rfind("Indirect leak", 0) == 0) {
      current = line.rfind("Direct", 0) == 0 ? &blocks.emplace_back() : nullptr;
    } else if (line.empty() || line.rfind("SUMMARY", 0) == 0) {
      current = nullptr;
    }
    if (current) *current += line + "\n";
  }
  return blocks;
}

TEST(lsan_policy, planted_leaks_are_reported) {
  if (!built_with_asan) GTEST_SKIP() << "LeakSanitizer's policy is checked in the asan-ubsan build";
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  const fs::path dir = fs::temp_directory_path() / ("opval_lsan_policy_" + std::to_string(::getpid()));
  fs::create_directories(dir / "pocl");
  // The child inherits this process's ASan options (the preset's, with the slow unwinder that
  // tests/cpp/CMakeLists.txt gives the tests that drive PoCL); the suppressions are the
  // project's, and LeakSanitizer lists which it used.
  ::setenv("POCL_CACHE_DIR", (dir / "pocl").c_str(), 1);
  const std::string lsan = std::string(std::getenv("LSAN_OPTIONS") ? std::getenv("LSAN_OPTIONS") : "") +
                           ":suppressions=" OPVAL_SOURCE_DIR "/tests/sanitizers/lsan.supp:print_suppressions=1";
  ::setenv("LSAN_OPTIONS", lsan.c_str(), 1);
  const opval::testing::cli_result r = opval::testing::run_cli(
      fs::read_symlink("/proc/self/exe").string(), dir,
      {"--gtest_also_run_disabled_tests", "--gtest_filter=lsan_policy.DISABLED_planted_leaks"});
  fs::remove_all(dir);
  const std::string report = r.out + r.err;

  ASSERT_NE(r.out.find("[  PASSED  ] 1 test"), std::string::npos) << report;
  EXPECT_NE(r.code, 0) << "LeakSanitizer did not fail the child:\n" << report;
  const std::vector<std::string> leaks = direct_leaks(report);
  int heap = 0, opencl = 0;
  for (const std::string& leak : leaks) {
    heap += leak.find("planted_heap_leak") != std::string::npos;
    opencl += leak.find("planted_opencl_leak") != std::string::npos;
    EXPECT_TRUE(leak.find("planted_") != std::string::npos) << "a leak that was not planted:\n" << leak;
  }
  EXPECT_EQ(heap, 1) << report;
#ifdef OPVAL_HAVE_OPENCL
  EXPECT_EQ(opencl, 1) << "an OpenCL buffer leaked by opval's code went unreported:\n" << report;
#endif
  // PoCL did leak on the cold cache, and the suppression (not luck) kept it out of the report.
  EXPECT_TRUE(std::regex_search(report, std::regex(R"(Suppressions used:[\s\S]*pocl_check_kernel_disk_cache)")))
      << "PoCL's cold-cache leak was not seen; is the suppression still needed?\n" << report;
}

}  // namespace
