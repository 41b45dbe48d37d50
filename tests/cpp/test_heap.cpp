// Memory accounting and leak detection (core/heap_stats.hpp): the allocator hooks count what
// a section allocates and nothing outside it, peak and total differ as they should, and a
// kernel that leaks on every call FAILS with the bytes it leaks, in-process and through the
// CLI, while a correct kernel and the real libraries' caches are not taken for leaks.
// This test links the hooks (tests/cpp/CMakeLists.txt), as the `opval` executable does.
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backend_testing.hpp"
#include "cli_testing.hpp"
#include "core/heap_stats.hpp"
#include "backends/plugin/plugin_backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace opval {
namespace {

// Calls the compiler cannot see through, so it cannot drop a malloc paired with its free.
void* (*volatile test_malloc)(std::size_t) = std::malloc;
void (*volatile test_free)(void*) = std::free;

// The bytes the hooks count for a block of `size` bytes: its usable size.
std::int64_t counted_size(std::size_t size) {
  void* p = test_malloc(size);
  const auto n = static_cast<std::int64_t>(malloc_usable_size(p));
  test_free(p);
  return n;
}

// What the leaking plugin loses per call: one malloc(64 KiB), counted at its usable size.
std::int64_t plugin_leak_bytes() { return counted_size(64 * 1024); }

constexpr const char* leaking_problem = "matmul m=4 n=5 k=3";

// Skips a test that needs the hooks where they are absent (OPVAL_HEAP_HOOKS=OFF, sanitizer
// builds, valgrind); HooksAreLinkedAndLive says whether they should be there.
#define OPVAL_HOOKS_OR_SKIP()                                                                    \
  if (const std::string& why = heap_hooks_unavailable_reason(); !why.empty()) GTEST_SKIP() << why

case_result run_plugin(const char* path, const char* line, int leak_check) {
  auto b = load_plugin_backend(path);
  run_options o;
  o.leak_check = leak_check;
  return run_case(parse_problem(line), *b, o);
}

TEST(Heap, HooksAreLinkedAndLive) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !OPVAL_HEAP_HOOKS_LINKED
  GTEST_SKIP() << "no allocator hooks in this build: " << heap_hooks_unavailable_reason();
#else
  if (const char* preload = std::getenv("LD_PRELOAD"); preload && std::string(preload).find("vgpreload") != std::string::npos)
    GTEST_SKIP() << heap_hooks_unavailable_reason();
  EXPECT_EQ(heap_hooks_unavailable_reason(), "");
#endif
}

TEST(Heap, CountsWhatTheSectionAllocatesAndNothingOutside) {
  OPVAL_HOOKS_OR_SKIP();
  void* before = test_malloc(4000);  // outside any section: never counted
  heap_section s;
  void* inside = test_malloc(1000);
  const std::int64_t size = static_cast<std::int64_t>(malloc_usable_size(inside));
  test_free(inside);
  const heap_stats h = s.finish();
  test_free(before);  // after the section: not counted either
  ASSERT_TRUE(h.measured);
  EXPECT_EQ(h.allocations, 1);
  EXPECT_EQ(h.releases, 1);
  EXPECT_EQ(h.total_bytes, size);
  EXPECT_EQ(h.peak_bytes, size);
  EXPECT_EQ(h.net_bytes, 0);
  EXPECT_EQ(s.finish().allocations, 1) << "finish() again returns the same stats";
}

TEST(Heap, ReleasingAnOlderBlockLowersTheNetNotThePeak) {
  OPVAL_HOOKS_OR_SKIP();
  void* old = test_malloc(3000);
  const std::int64_t size = static_cast<std::int64_t>(malloc_usable_size(old));
  heap_section s;
  test_free(old);
  const heap_stats h = s.finish();
  EXPECT_EQ(h.allocations, 0);
  EXPECT_EQ(h.releases, 1);
  EXPECT_EQ(h.net_bytes, -size);
  EXPECT_EQ(h.peak_bytes, 0);
}

TEST(Heap, PeakIsTheLargestLiveTotalIsTheSum) {
  OPVAL_HOOKS_OR_SKIP();
  heap_section s;
  void* a = test_malloc(10000);
  const std::int64_t na = static_cast<std::int64_t>(malloc_usable_size(a));
  test_free(a);
  void* b = test_malloc(20000);
  void* c = test_malloc(5000);
  const std::int64_t nb = static_cast<std::int64_t>(malloc_usable_size(b));
  const std::int64_t nc = static_cast<std::int64_t>(malloc_usable_size(c));
  test_free(b);
  test_free(c);
  const heap_stats h = s.finish();
  EXPECT_EQ(h.allocations, 3);
  EXPECT_EQ(h.total_bytes, na + nb + nc);
  EXPECT_EQ(h.peak_bytes, std::max(na, nb + nc));
}

TEST(Heap, ReallocCountsAsAReleaseAndAnAllocation) {
  OPVAL_HOOKS_OR_SKIP();
  void* p = test_malloc(100);
  const std::int64_t before = static_cast<std::int64_t>(malloc_usable_size(p));
  heap_section s;
  p = std::realloc(p, 50000);
  const std::int64_t after = static_cast<std::int64_t>(malloc_usable_size(p));
  const heap_stats h = s.finish();
  test_free(p);
  EXPECT_EQ(h.allocations, 1);
  EXPECT_EQ(h.releases, 1);
  EXPECT_EQ(h.net_bytes, after - before);
}

TEST(Heap, OperatorNewIsCountedThroughMalloc) {
  OPVAL_HOOKS_OR_SKIP();
  heap_section s;
  auto* v = new std::vector<double>(1000);
  delete v;
  const heap_stats h = s.finish();
  EXPECT_EQ(h.allocations, 2);
  EXPECT_GE(h.total_bytes, static_cast<std::int64_t>(1000 * sizeof(double)));
  EXPECT_EQ(h.net_bytes, 0);
}

TEST(Heap, ResidentSetIsReadable) {
  const auto rss = resident_bytes();
  ASSERT_TRUE(rss.has_value());
  EXPECT_GT(*rss, 0);
}

heap_stats run_stats(std::int64_t bytes, std::int64_t blocks) {
  heap_stats h;
  h.measured = true;
  h.net_bytes = bytes;
  h.allocations = blocks > 0 ? blocks : 0;
  h.releases = blocks < 0 ? -blocks : 0;
  return h;
}

TEST(Heap, LeakMeansEveryRunLeavesMoreBlocksAndBytes) {
  EXPECT_TRUE(judge_leaks({run_stats(100, 1), run_stats(100, 1), run_stats(100, 1)}).leaks);
  EXPECT_FALSE(judge_leaks({run_stats(0, 0), run_stats(100, 1), run_stats(100, 1)}).leaks) << "not every run";
  EXPECT_FALSE(judge_leaks({run_stats(100, 1), run_stats(-50, -1), run_stats(100, 1)}).leaks);
  // Usable sizes jitter with the heap's layout: the same blocks re-allocated may read +32 B.
  EXPECT_FALSE(judge_leaks({run_stats(32, 0), run_stats(32, 0), run_stats(32, 0)}).leaks) << "no new block";
  EXPECT_FALSE(judge_leaks({}).leaks);
  const leak_check l = judge_leaks({run_stats(300, 2), run_stats(200, 1)});
  EXPECT_EQ(l.bytes_per_call, 200);
  EXPECT_NE(l.finding.find("leaks 200 bytes (up to 300) in 1 block per call"), std::string::npos) << l.finding;
}

TEST(Heap, LeakingPluginFailsWithTheBytesItLeaksPerCall) {
  OPVAL_HOOKS_OR_SKIP();
  const case_result r = run_plugin(OPVAL_MISBEHAVING_GEMM_LEAK, leaking_problem, 3);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
  const std::string expected = "leaks " + std::to_string(plugin_leak_bytes()) + " bytes in 1 block per call";
  EXPECT_EQ(r.v.reason.rfind(expected, 0), 0u) << r.v.reason;
  EXPECT_EQ(r.memory.leak.runs, 3);
  EXPECT_EQ(r.memory.leak.growth, std::vector<std::int64_t>(3, plugin_leak_bytes()));
  EXPECT_NE(r.repro.find("--leak-check 3"), std::string::npos) << r.repro;
  // The main run's kernel section saw the leaked block too.
  EXPECT_TRUE(r.memory.run.kernel.measured);
  EXPECT_GE(r.memory.run.kernel.net_bytes, plugin_leak_bytes());
  EXPECT_GE(r.memory.run.kernel.peak_bytes, plugin_leak_bytes());
}

TEST(Heap, LeakingPluginPassesWhereItDoesNotLeakOrWithoutTheCheck) {
  OPVAL_HOOKS_OR_SKIP();
  // The plugin misbehaves only when m >= 2 and n >= 2.
  EXPECT_EQ(run_plugin(OPVAL_MISBEHAVING_GEMM_LEAK, "matmul m=1 n=5 k=3", 3).v.st, state::passed);
  const case_result r = run_plugin(OPVAL_MISBEHAVING_GEMM_LEAK, leaking_problem, 0);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_EQ(r.memory.leak.runs, 0);
}

TEST(Heap, CorrectPluginIsNotFlagged) {
  OPVAL_HOOKS_OR_SKIP();
  const case_result r = run_plugin(OPVAL_MISBEHAVING_GEMM_NONE, leaking_problem, 5);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_EQ(r.memory.leak.runs, 5);
  EXPECT_FALSE(r.memory.leak.leaks);
}

// The real libraries fill caches on their first calls (oneDNN's primitive cache, OpenCL's
// program cache, thread pools): none of it is a leak.
class HeapOnLibraries : public ::testing::TestWithParam<const char*> {};

TEST_P(HeapOnLibraries, RegressionSuiteHasNoLeak) {
  OPVAL_HOOKS_OR_SKIP();
  OPVAL_BACKEND_OR_SKIP(b, GetParam());
  run_options o;
  o.leak_check = 3;
  o.perturb_check = false;
  int checked = 0;
  for (const auto& lp : suite_problems("regression", {"matmul"})) {
    const case_result r = run_case(lp.prob, *b, o, lp.source);
    if (r.memory.leak.runs == 0) continue;  // refused
    ++checked;
    EXPECT_FALSE(r.memory.leak.leaks) << r.descriptor << ": " << r.memory.leak.finding;
    EXPECT_TRUE(r.memory.run.kernel.measured) << r.descriptor;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, HeapOnLibraries, ::testing::Values("onednn", "openblas", "opencl"));

class HeapCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("opval_heap_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  testing::cli_result run(const char* plugin, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", "--plugin", plugin, "--problems", leaking_problem,
                                      "--jsonl", (dir_ / "out.jsonl").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_cli(OPVAL_CLI_PATH, dir_, args);
  }
  nlohmann::json record() {
    std::ifstream in(dir_ / "out.jsonl");
    std::string line;
    std::getline(in, line);
    return nlohmann::json::parse(line);
  }
  std::filesystem::path dir_;
};

TEST_F(HeapCli, LeakCheckFailsTheLeakingKernelInItsWorker) {
  OPVAL_HOOKS_OR_SKIP();
  const auto r = run(OPVAL_MISBEHAVING_GEMM_LEAK, {"--leak-check", "3"});
  EXPECT_NE(r.code, 0) << r.out << r.err;
  const std::string expected = "leaks " + std::to_string(plugin_leak_bytes()) + " bytes in 1 block per call";
  EXPECT_NE(r.out.find("FAILED: " + expected), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 case leaks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--leak-check 3"), std::string::npos) << "the repro command keeps the check\n" << r.out;
  const auto j = record();
  EXPECT_EQ(j["state"], std::string(to_string(state::failed)));
  EXPECT_EQ(j["memory"]["leak_check"]["leaks"], true);
  EXPECT_EQ(j["memory"]["leak_check"]["bytes_per_call"], plugin_leak_bytes());
  EXPECT_EQ(j["memory"]["kernel"]["measured"], true);
  EXPECT_GE(j["memory"]["kernel"]["peak_bytes"].get<std::int64_t>(), plugin_leak_bytes());
}

TEST_F(HeapCli, CorrectKernelPassesAndItsMemoryIsRecorded) {
  OPVAL_HOOKS_OR_SKIP();
  const auto r = run(OPVAL_MISBEHAVING_GEMM_NONE, {"--leak-check", "3", "--verbose"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("memory: kernel heap peak"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no leak over 3 more runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel heap over 1 case"), std::string::npos) << r.out;
  const auto j = record();
  EXPECT_EQ(j["memory"]["leak_check"]["leaks"], false);
  EXPECT_EQ(j["memory"]["leak_check"]["runs"], 3);
}

TEST_F(HeapCli, WithoutTheCheckALeakIsMeasuredButNotJudged) {
  OPVAL_HOOKS_OR_SKIP();
  const auto r = run(OPVAL_MISBEHAVING_GEMM_LEAK, {});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const auto j = record();
  EXPECT_FALSE(j["memory"].contains("leak_check"));
  EXPECT_GE(j["memory"]["kernel"]["net_bytes"].get<std::int64_t>(), plugin_leak_bytes());
}

}  // namespace
}  // namespace opval
