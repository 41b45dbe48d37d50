// Kernel plugins (include/opval/plugin.h): the example sgemm_tiled passes the matmul suites it
// supports and declines the rest with reasons; its planted k-tail bug is caught; broken
// plugins are refused with messages naming what is wrong; a kernel error is a FAILED case;
// and `opval run --plugin` behaves as documented in docs/CLI.md.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_testing.hpp"
#include "opval/error.hpp"
#include "opval/plugin_backend.hpp"
#include "opval/runner.hpp"

#if !defined(OPVAL_SGEMM_TILED) || !defined(OPVAL_CLI_PATH)
#error "tests/cpp/CMakeLists.txt must define the plugin paths for test_plugin"
#endif

namespace opval {
namespace {

namespace fs = std::filesystem;

case_result run_one(backend& b, const std::string& descriptor) {
  return run_case(parse_problem(descriptor), b, run_options{});
}

/// sgemm_tiled SKIPs every case on a CPU without AVX2/FMA: nothing to check there.
#define SKIP_WITHOUT_AVX2()                                                              \
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))                 \
  GTEST_SKIP() << "this CPU lacks AVX2/FMA"

/// The message of the opval::error that loading `path` throws ("" when it loads).
std::string load_error(const std::string& path) {
  try {
    load_plugin_backend(path);
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

TEST(Plugin, NameAndVersionIdentifyThePlugin) {
  auto b = load_plugin_backend(OPVAL_SGEMM_TILED);
  EXPECT_EQ(b->name(), "plugin:sgemm_tiled");
  EXPECT_EQ(b->version(), std::string("plugin ABI 1 (") + OPVAL_SGEMM_TILED + ")");
}

TEST(Plugin, SgemmTiledPassesEveryMatmulSuiteCaseItSupports) {
  SKIP_WITHOUT_AVX2();
  auto b = load_plugin_backend(OPVAL_SGEMM_TILED);
  int passed = 0, unimplemented = 0;
  for (const std::string tag : {"smoke", "regression"}) {
    for (const located_problem& lp : suite_problems(tag, {"matmul"})) {
      case_result r = run_case(lp.prob, *b, run_options{}, lp.source);
      if (r.v.st == state::unimplemented) {
        ++unimplemented;
        EXPECT_NE(r.v.reason.find("sgemm_tiled implements"), std::string::npos) << r.v.reason;
        continue;
      }
      EXPECT_EQ(r.v.st, state::passed) << r.descriptor << ": " << r.v.reason;
      passed += r.v.st == state::passed;
    }
  }
  EXPECT_GE(passed, 20);
  EXPECT_GT(unimplemented, 0);
}

TEST(Plugin, UnsupportedAttributesAreUnimplementedWithTheAttributeNamed) {
  auto b = load_plugin_backend(OPVAL_SGEMM_TILED);
  const std::pair<const char*, const char*> cases[] = {
      {"matmul m=4 n=5 k=3 residual=1", "residual=1"},
      {"matmul m=4 n=5 k=3 alpha=0.5", "alpha=0.5"},
      {"matmul m=4 n=5 k=3 bias=1", "bias=1"},
      {"matmul m=4 n=5 k=3 batch_a=2", "batch_a=2"},
      {"matmul m=4 n=5 k=3 dt=bf16:f32:bf16", "bf16:f32:bf16"}};
  for (const auto& [descriptor, named] : cases) {
    case_result r = run_one(*b, descriptor);
    EXPECT_EQ(r.v.st, state::unimplemented) << descriptor;
    EXPECT_NE(r.v.reason.find(named), std::string::npos) << r.v.reason;
  }
}

TEST(Plugin, PaddedAndTransposedLayoutsAreHonoured) {
  SKIP_WITHOUT_AVX2();
  auto b = load_plugin_backend(OPVAL_SGEMM_TILED);
  for (const char* d : {"matmul m=13 n=19 k=21 lda=24 ldb=32 ldc=20",
                        "matmul m=13 n=19 k=21 ta=1 tb=1 lda=16 ldb=24"}) {
    case_result r = run_one(*b, d);
    EXPECT_EQ(r.v.st, state::passed) << d << ": " << r.v.reason;
  }
}

TEST(Plugin, PlantedTailBugFailsOnlyWhenKIsNotAMultipleOf8) {
  SKIP_WITHOUT_AVX2();
  auto b = load_plugin_backend(OPVAL_SGEMM_TILED_BUGGY);
  case_result bad = run_one(*b, "matmul m=17 n=9 k=33");
  EXPECT_EQ(bad.v.st, state::failed);
  EXPECT_FALSE(bad.v.reason.empty());
  EXPECT_NE(bad.repro.find("matmul m=17 n=9 k=33"), std::string::npos);
  EXPECT_EQ(run_one(*b, "matmul m=17 n=9 k=32").v.st, state::passed);
}

TEST(Plugin, KernelErrorIsAFailedCaseWithThePluginsMessage) {
  auto b = load_plugin_backend(OPVAL_BROKEN_KERNEL);
  case_result r = run_one(*b, "matmul m=4 n=5 k=3");
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_NE(r.v.reason.find("plugin kernel failed: broken_kernel: no kernel for matmul"),
            std::string::npos)
      << r.v.reason;
}

TEST(Plugin, MissingSymbolIsNamedWithTheFile) {
  std::string msg = load_error(OPVAL_BROKEN_MISSING_EXECUTE);
  EXPECT_NE(msg.find("opval_plugin_execute"), std::string::npos) << msg;
  EXPECT_NE(msg.find(OPVAL_BROKEN_MISSING_EXECUTE), std::string::npos) << msg;
  EXPECT_EQ(msg.find("opval_plugin_supports"), std::string::npos) << msg;
}

TEST(Plugin, AbiMismatchNamesBothVersions) {
  std::string msg = load_error(OPVAL_BROKEN_ABI);
  EXPECT_NE(msg.find("999"), std::string::npos) << msg;
  EXPECT_NE(msg.find("version 1"), std::string::npos) << msg;
}

TEST(Plugin, UnloadableFileGivesTheLoadersMessage) {
  std::string msg = load_error("/no/such/plugin.so");
  EXPECT_NE(msg.find("/no/such/plugin.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
}

using testing::cli_result;

// Each test runs in its own process (ctest -j), so each gets its own scratch directory.
cli_result opval_cli(const std::vector<std::string>& args) {
  const fs::path dir = fs::temp_directory_path() / ("opval_test_plugin_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  cli_result r = testing::run_cli(OPVAL_CLI_PATH, dir, args);
  fs::remove_all(dir);
  return r;
}

TEST(PluginCli, RunWithPluginPasses) {
  SKIP_WITHOUT_AVX2();
  cli_result r = opval_cli({"run", "--plugin", OPVAL_SGEMM_TILED, "--problems", "matmul m=17 n=9 k=33"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("plugin:sgemm_tiled"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 passed"), std::string::npos) << r.out;
}

TEST(PluginCli, BuggyPluginFailsAndReproNamesThePlugin) {
  SKIP_WITHOUT_AVX2();
  cli_result r = opval_cli({"run", "--plugin", OPVAL_SGEMM_TILED_BUGGY, "--problems", "matmul m=17 n=9 k=33"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(std::string("--plugin '") + OPVAL_SGEMM_TILED_BUGGY + "'"), std::string::npos)
      << r.out;
}

TEST(PluginCli, BrokenPluginIsBadInputOnOneLine) {
  cli_result r = opval_cli({"run", "--plugin", OPVAL_BROKEN_ABI, "--problems", "matmul m=17 n=9 k=33"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("opval: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("999"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace opval
