// Kernel plugins (include/opval/plugin.h): the examples sgemm_tiled and flash_attention pass
// the suites of their op on what they support and decline the rest with reasons; their
// planted bugs (sgemm's k tail, flash attention's unrescaled running sum) are caught; broken
// plugins are refused with messages naming what is wrong; a kernel error is a FAILED case;
// and `opval run --plugin` behaves as documented in docs/CLI.md and docs/PLUGINS.md.
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
#include <nlohmann/json.hpp>

#include "cli_testing.hpp"
#include "opval/error.hpp"
#include "backends/plugin/plugin_backend.hpp"
#include "backends/plugin/plugin_entry_points.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

#if !defined(OPVAL_SGEMM_TILED) || !defined(OPVAL_CLI_PATH) || !defined(OPVAL_FLASH_ATTENTION) || \
    !defined(OPVAL_DECLINING_GEMM)
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
  EXPECT_EQ(b->version(), std::string("plugin ABI 1.1 (") + OPVAL_SGEMM_TILED + ")");
  // A plugin that exports no opval_plugin_abi_minor_version is minor 0.
  EXPECT_EQ(load_plugin_backend(OPVAL_DECLINING_GEMM_MINOR0)->version(),
            std::string("plugin ABI 1.0 (") + OPVAL_DECLINING_GEMM_MINOR0 + ")");
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

// OPVAL_PLUGIN_DECLINED (ABI minor 1): examples/plugins/declining_gemm.c declines k > 64 on every
// call, m = 3 on every call after a case's first, and m = 5 after writing past its output.
TEST(PluginDecline, ExecuteDeclinedIsSkippedWithThePluginsReason) {
  auto b = load_plugin_backend(OPVAL_DECLINING_GEMM);
  EXPECT_EQ(run_one(*b, "matmul m=4 n=6 k=64").v.st, state::passed);  // the control: it computes
  const case_result r = run_one(*b, "matmul m=4 n=6 k=65");
  EXPECT_EQ(r.v.st, state::skipped);
  EXPECT_EQ(r.v.reason, "declining_gemm: k=65 needs a workspace it does not have");
}

// A decline after a first call computed the case: the checks that rerun the kernel (poison,
// repeat) have nothing to compare, so the case is SKIPPED, saying it was a rerun; the
// perturbation rerun comes after the verdict, which it leaves alone.
TEST(PluginDecline, DeclineOnARerunIsSkippedAndSaysSo) {
  auto b = load_plugin_backend(OPVAL_DECLINING_GEMM);
  const case_result r = run_one(*b, "matmul m=3 n=6 k=8");
  EXPECT_EQ(r.v.st, state::skipped);
  EXPECT_EQ(r.v.reason, "declined the problem on a rerun: declining_gemm: out of scratch on call 2");
  run_options no_poison;
  no_poison.poison_check = false;
  const case_result perturbed = run_case(parse_problem("matmul m=3 n=6 k=9"), *b, no_poison);
  EXPECT_EQ(perturbed.v.st, state::passed) << perturbed.v.reason;
}

TEST(PluginDecline, MemoryDamageBeforeADeclineFailsTheCase) {
  auto b = load_plugin_backend(OPVAL_DECLINING_GEMM);
  const case_result r = run_one(*b, "matmul m=5 n=6 k=8");
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_NE(r.v.reason.find("'dst'"), std::string::npos) << r.v.reason;
  EXPECT_NE(r.v.reason.find("; the kernel then declined the problem: declining_gemm: m=5 is not supported after all"),
            std::string::npos) << r.v.reason;
}

// A plugin that does not declare minor 1 keeps minor 0's meaning: every nonzero code FAILS,
// OPVAL_PLUGIN_DECLINED's value (3, which broken_kernel returns too) included.
TEST(PluginDecline, DeclineCodeOfAMinor0PluginStaysAFailure) {
  auto b = load_plugin_backend(OPVAL_DECLINING_GEMM_MINOR0);
  const case_result r = run_one(*b, "matmul m=4 n=6 k=65");
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_NE(r.v.reason.find("plugin kernel failed: declining_gemm: k=65 needs a workspace"), std::string::npos)
      << r.v.reason;
  EXPECT_EQ(run_one(*load_plugin_backend(OPVAL_BROKEN_KERNEL), "matmul m=4 n=5 k=3").v.st, state::failed);
}

TEST(PluginDecline, ADeclinedCaseIsRecordedAsSkippedInTheJournal) {
  const fs::path jsonl = fs::temp_directory_path() / ("opval_decline_" + std::to_string(::getpid()) + ".jsonl");
  const testing::cli_result r = testing::run_cli(OPVAL_CLI_PATH, fs::temp_directory_path(),
                                        {"run", "--plugin", OPVAL_DECLINING_GEMM, "--problems", "matmul m=4 n=6 k=65",
                                         "--jsonl", jsonl.string()});
  std::ifstream records(jsonl);
  std::string line;
  std::getline(records, line);
  fs::remove(jsonl);
  EXPECT_EQ(r.code, 1) << r.out << r.err;  // nothing ran: not a pass
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("state"), "SKIPPED") << line;
  EXPECT_EQ(j.at("reason"), "declining_gemm: k=65 needs a workspace it does not have") << line;
}

// Contract options in support matching: a minor-1 plugin sees the whole contract, so its
// strcmp with "f32:f32:f32" accepts f32 at the default options only; a minor-0 plugin, which
// sees the types alone, is given no problem whose contract has an option.
TEST(PluginContract, AKernelOfF32IsNotRunOnProblemsWithContractOptions) {
  auto minor1 = load_plugin_backend(OPVAL_DECLINING_GEMM);
  auto minor0 = load_plugin_backend(OPVAL_DECLINING_GEMM_MINOR0);
  for (backend* b : {minor1.get(), minor0.get()})
    EXPECT_EQ(run_one(*b, "matmul m=4 n=6 k=8 dt=f32").v.st, state::passed) << b->name();
  for (const char* options : {"denorm=ftz", "acc_round=rz", "dst_round=rz", "deterministic=0"}) {
    const std::string d = std::string("matmul m=4 n=6 k=8 dt=f32 ") + options;
    const case_result r1 = run_one(*minor1, d);
    EXPECT_EQ(r1.v.st, state::unimplemented) << d;
    EXPECT_EQ(r1.v.reason, std::string("declining_gemm implements matmul f32:f32:f32 only, not matmul f32:f32:f32 ") +
                               options);
    const case_result r0 = run_one(*minor0, d);
    EXPECT_EQ(r0.v.st, state::unimplemented) << d;
    EXPECT_NE(r0.v.reason.find(std::string("sees only the contract's types (f32:f32:f32), so opval does not run it "
                                           "on a contract with options (") + options + ")"),
              std::string::npos) << r0.v.reason;
  }
}

// Flash attention (minor 1) reads mid=bf16 from p->contract and still declines what it lacks.
TEST(PluginContract, FlashAttentionReadsItsOptionsFromTheContract) {
  auto b = load_plugin_backend(OPVAL_FLASH_ATTENTION);
  EXPECT_EQ(run_one(*b, "attention b=1 h=2 lq=8 lk=8 d=16 dt=bf16:f32:bf16 mid=bf16").v.st, state::passed);
  const case_result ftz = run_one(*b, "attention b=1 h=2 lq=8 lk=8 d=16 dt=bf16:f32:bf16 denorm=ftz");
  EXPECT_EQ(ftz.v.st, state::unimplemented);
  EXPECT_NE(ftz.v.reason.find("contract option denorm=ftz is not supported"), std::string::npos) << ftz.v.reason;
}

std::uint32_t abi_1() { return OPVAL_PLUGIN_ABI_VERSION; }
std::uint32_t minor_99() { return 99; }
const char* fake_name() { return "fake"; }

TEST(Plugin, ANewerMinorIsRefusedNamingBoth) {
  detail::plugin_entry_points f;
  f.abi_version = abi_1;
  f.abi_minor_version = minor_99;
  f.name = fake_name;
  try {
    detail::make_plugin_backend(f, "fake.so");
    ADD_FAILURE() << "a plugin of minor 99 loaded";
  } catch (const error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'fake.so' was built for plugin ABI 1.99 but this opval supports plugin ABI 1.1"),
              std::string::npos) << msg;
  }
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

// The repro command is pasted into a shell as printed: a plugin path with a space and a single
// quote must come through it whole, and the command must fail the same case again.
TEST(PluginCli, ReproOfAPluginPathWithASpaceAndAQuoteRunsInAShell) {
  SKIP_WITHOUT_AVX2();
  const fs::path dir = fs::temp_directory_path() / ("opval plugin's dir " + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path plugin = dir / "lib sgemm 'buggy'.so";
  fs::copy_file(OPVAL_SGEMM_TILED_BUGGY, plugin, fs::copy_options::overwrite_existing);
  const fs::path jsonl = dir / "run.jsonl";
  cli_result r = opval_cli({"run", "--plugin", plugin.string(), "--problems", "matmul m=17 n=9 k=33", "--jsonl",
                            jsonl.string()});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  std::ifstream records(jsonl);
  std::string line;
  std::getline(records, line);
  std::string repro = nlohmann::json::parse(line).at("repro").get<std::string>();
  ASSERT_TRUE(repro.starts_with("opval repro ")) << repro;
  repro.replace(0, 5, testing::quote(OPVAL_CLI_PATH));
  const cli_result again = testing::run_cli("/bin/sh", dir, {"-c", repro});
  fs::remove_all(dir);
  const std::string out = again.out + again.err;
  EXPECT_EQ(again.code, 1) << repro << "\n" << out;
  EXPECT_NE(out.find("plugin:sgemm_tiled_buggy"), std::string::npos) << repro << "\n" << out;
  EXPECT_NE(out.find("FAILED"), std::string::npos) << repro << "\n" << out;
}

// `opval bench` times the correct plugin and refuses to time the buggy one: its check fails,
// and the reason and repro are shown instead of a speed.
TEST(PluginCli, BenchTimesTheCorrectPluginAndNotTheBuggyOne) {
  SKIP_WITHOUT_AVX2();
  const std::string problem = "matmul m=64 n=64 k=65";
  cli_result good = opval_cli({"bench", "--plugin", OPVAL_SGEMM_TILED, "--problems", problem, "--budget", "0.3"});
  EXPECT_EQ(good.code, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("TIMED"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find("1 timed, 0 failed, 0 skipped"), std::string::npos) << good.out;
  cli_result bad = opval_cli({"bench", "--plugin", OPVAL_SGEMM_TILED_BUGGY, "--problems", problem, "--budget", "0.3"});
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  EXPECT_EQ(bad.out.find("TIMED"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("not timed: the check FAILED:"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find(std::string("--plugin '") + OPVAL_SGEMM_TILED_BUGGY + "'"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("0 timed, 1 failed, 0 skipped"), std::string::npos) << bad.out;
}

TEST(PluginCli, BrokenPluginIsBadInputOnOneLine) {
  cli_result r = opval_cli({"run", "--plugin", OPVAL_BROKEN_ABI, "--problems", "matmul m=17 n=9 k=33"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("opval: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("999"), std::string::npos) << r.err;
}

// ---- flash_attention (examples/plugins/flash_attention.cpp) ----

/// The counts of a CLI run's closing line `N passed, N failed, N skipped` (-1 when absent).
struct run_counts {
  int passed = -1, failed = -1, skipped = -1;
};

run_counts closing_counts(const std::string& out) {
  run_counts c;
  const std::size_t at = out.rfind(" passed, ");
  if (at == std::string::npos) return c;
  const std::size_t line = out.rfind('\n', at);
  std::sscanf(out.c_str() + (line == std::string::npos ? 0 : line + 1), "%d passed, %d failed, %d skipped",
              &c.passed, &c.failed, &c.skipped);
  return c;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(FlashAttention, NameIdentifiesThePlugin) {
  EXPECT_EQ(load_plugin_backend(OPVAL_FLASH_ATTENTION)->name(), "plugin:flash_attention");
  EXPECT_EQ(load_plugin_backend(OPVAL_FLASH_ATTENTION_BUGGY)->name(), "plugin:flash_attention_buggy");
}

TEST(FlashAttention, UnsupportedContractsAreUnimplementedWithTheContractOrOptionNamed) {
  auto b = load_plugin_backend(OPVAL_FLASH_ATTENTION);
  const std::pair<const char*, const char*> cases[] = {
      {"attention b=1 h=1 lq=4 lk=4 d=8 dt=tf32", "not f32@tf32:f32:f32"},
      {"attention b=1 h=1 lq=4 lk=4 d=8 dt=f16:f32:f16", "not f16:f32:f16"},
      {"attention b=1 h=1 lq=4 lk=4 d=8 dt=bf16:f32:bf16 mid=f16", "mid=f16"},
      {"attention b=1 h=1 lq=4 lk=4 d=8 dt=bf16:f32:bf16 dst_round=rz", "dst_round=rz"},
      {"attention b=1 h=1 lq=4 lk=4 d=8 dt=f32 denorm=ftz", "denorm=ftz"},
      {"matmul m=4 n=5 k=3", "attention only, not matmul"}};
  for (const auto& [descriptor, named] : cases) {
    case_result r = run_one(*b, descriptor);
    EXPECT_EQ(r.v.st, state::unimplemented) << descriptor;
    EXPECT_NE(r.v.reason.find(named), std::string::npos) << r.v.reason;
  }
}

// Several key blocks (block_k = 64), causal block skipping in both alignments, GQA, bias,
// key lengths, P rounded to bf16 and mixed input/output types together.
TEST(FlashAttention, ClaimedContractsPassAcrossKeyBlocksAndMasks) {
  auto b = load_plugin_backend(OPVAL_FLASH_ATTENTION);
  for (const char* d :
       {"attention b=2 h=4 hkv=2 lq=70 lk=150 d=32 causal=top_left mask=bias key_lengths=1 dt=bf16:f32:f32 mid=bf16",
        "attention b=2 h=2 lq=45 lk=140 d=24 dv=40 causal=bottom_right dt=f32:f32:bf16 fill=special",
        "attention b=1 h=3 hkv=1 lq=33 lk=200 d=64 scale=0.3 dt=bf16:f32:bf16 fill=large"}) {
    case_result r = run_one(*b, d);
    EXPECT_EQ(r.v.st, state::passed) << d << ": " << r.v.reason;
  }
}

TEST(FlashAttentionCli, PassesTheAttentionSuitesOnTheContractsItClaims) {
  for (const char* tag : {"smoke", "regression"}) {
    // --verbose lists each refusal with its reason (without, they are counted per reason).
    cli_result r = opval_cli({"run", "--plugin", OPVAL_FLASH_ATTENTION, "--op", "attention", "--tag", tag, "--verbose"});
    EXPECT_EQ(r.code, 0) << tag << "\n" << r.out << r.err;
    const run_counts c = closing_counts(r.out);
    EXPECT_EQ(c.failed, 0) << r.out;
    EXPECT_GE(c.passed, std::string(tag) == "smoke" ? 2 : 20) << r.out;
    // Every case not run is an UNIMPLEMENTED one carrying the plugin's reason: the contract,
    // or a feature it does not implement (softcap, a sliding window, a 4-D bias).
    const std::size_t refused = occurrences(r.out, "\n  UNIMPLEMENTED: ");
    EXPECT_GT(refused, 0u) << r.out;
    const std::size_t features = occurrences(r.out, "\n  UNIMPLEMENTED: flash_attention does not implement softcap") +
                                 occurrences(r.out, "\n  UNIMPLEMENTED: flash_attention does not implement a sliding") +
                                 occurrences(r.out, "\n  UNIMPLEMENTED: flash_attention implements an [lq,lk] bias");
    EXPECT_EQ(features, std::string(tag) == "smoke" ? 0u : 9u) << r.out;
    EXPECT_EQ(refused, features + occurrences(r.out, "\n  UNIMPLEMENTED: flash_attention implements Q/K/V f32 or bf16"));
    EXPECT_EQ(static_cast<std::size_t>(c.skipped), refused) << r.out;
  }
}

// The running sum is only wrong once a later key block raises a row's maximum: one block
// (lk = 64) passes, a 65th key fails with the elements, the bound and the repro line.
TEST(FlashAttentionCli, PlantedRescaleBugPassesOneKeyBlockAndIsExplainedOnTwo) {
  const std::string one_block = "attention b=1 h=2 lq=16 lk=64 d=64 dt=bf16:f32:bf16";
  cli_result ok = opval_cli({"run", "--plugin", OPVAL_FLASH_ATTENTION_BUGGY, "--problems", one_block});
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_EQ(closing_counts(ok.out).passed, 1) << ok.out;

  cli_result bad = opval_cli({"run", "--plugin", OPVAL_FLASH_ATTENTION_BUGGY, "--problems",
                              "attention b=1 h=2 lq=16 lk=65 d=64 dt=bf16:f32:bf16", "--worst", "3"});
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  for (const std::string& expected :
       {std::string("FAILED: output 'o': "), std::string("elements beyond the bound; worst at ["),
        std::string("worst elements:"),
        std::string("repro: opval repro 'attention b=1 h=2 lq=16 lk=65 dt=bf16:f32:bf16' --seed 1 --plugin '") +
            OPVAL_FLASH_ATTENTION_BUGGY + "'"})
    EXPECT_NE(bad.out.find(expected), std::string::npos) << expected << "\n" << bad.out;
}

TEST(FlashAttentionCli, RegressionSuiteCatchesThePlantedBug) {
  cli_result r =
      opval_cli({"run", "--plugin", OPVAL_FLASH_ATTENTION_BUGGY, "--op", "attention", "--tag", "regression"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_GE(closing_counts(r.out).failed, 1) << r.out;
}

}  // namespace
}  // namespace opval
