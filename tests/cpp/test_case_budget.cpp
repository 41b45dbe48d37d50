// The memory budget of a case (docs/SAFETY.md, "Huge problems"): a problem too big for the
// machine is SKIPPED before anything is allocated, saying what it needs and what it may use,
// instead of growing a worker for minutes or failing an allocation as if the kernel were wrong.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "cli_testing.hpp"
#include "core/case_budget.hpp"
#include "opval/backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

#ifndef OPVAL_CLI_PATH
#error "tests/cpp/CMakeLists.txt must define OPVAL_CLI_PATH for test_case_budget"
#endif

namespace opval {
namespace {

TEST(CaseBudget, HugeProblemsAreSkippedAtOnceWithWhatTheyNeed) {
  // The three: a worker grown past 9 GB, minutes of silence, a FAILED "cannot map".
  for (const char* line : {"matmul m=2147483647 n=2 k=2", "matmul m=50000 n=50000 k=1",
                           "matmul m=100000 n=100000 k=100000"}) {
    const auto start = std::chrono::steady_clock::now();
    const testing::cli_result r =
        testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(), {"run", "--problems", line});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    SCOPED_TRACE(std::string(line) + "\n" + r.out + r.err);
    EXPECT_EQ(r.code, 1);  // no case ran
    EXPECT_NE(r.out.find("SKIPPED: needs "), std::string::npos);
    EXPECT_NE(r.out.find(" GB, budget "), std::string::npos);
    EXPECT_NE(r.out.find("half the memory available; --max-memory GB sets it"), std::string::npos);
    EXPECT_EQ(r.out.find("FAILED"), std::string::npos);
    EXPECT_LT(seconds, 30);  // a bound against minutes of allocation, not a timing figure
  }
}

TEST(CaseBudget, MaxMemorySetsTheBudget) {
  const auto run = [](const char* budget) {
    return testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(),
                            {"run", "--problems", "matmul m=300 n=300 k=8", "--max-memory", budget});
  };
  const testing::cli_result tight = run("0.001");
  EXPECT_EQ(tight.code, 1) << tight.out;
  EXPECT_NE(tight.out.find("SKIPPED: needs 4.7 MB, budget 1.0 MB (--max-memory): inputs 0.0 MB, outputs 0.4 MB"),
            std::string::npos)
      << tight.out;
  const testing::cli_result roomy = run("1");
  EXPECT_EQ(roomy.code, 0) << roomy.out;
  EXPECT_EQ(testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(),
                             {"run", "--problems", "relu shape=4", "--max-memory", "-1"})
                .code,
            2);
}

TEST(CaseBudget, ThePeakCoversWhatTheCaseAllocates) {
  // Every tensor the runner makes for a case, at least: inputs, two sets of outputs, and the
  // fp64 reference and bound per output element.
  for (const char* line : {"matmul m=64 n=48 k=32 lda=40", "softmax shape=16x100", "conv2d ic=8 oc=16 ih=12 iw=12 kh=3 kw=3"}) {
    const problem p = parse_problem(line);
    double in = 0, out = 0, out_elements = 0;
    for (const tensor& t : allocate(p.spec().inputs(p))) in += static_cast<double>(t.span_bytes());
    for (const tensor& t : allocate(p.spec().outputs(p)))
      out += static_cast<double>(t.span_bytes()), out_elements += static_cast<double>(t.numel());
    EXPECT_GE(detail::case_peak_bytes(p, run_options{}), in + 2 * out + 2 * 8 * out_elements) << line;
  }
}

TEST(CaseBudget, ACaseOverItsBudgetIsSkippedBeforeTheKernelRuns) {
  run_options o;
  o.max_memory_gb = 1e-6;  // 1 kB
  auto sim = make_backend("sim");
  const case_result r = run_case(parse_problem("matmul m=32 n=32 k=32"), *sim, o);
  EXPECT_EQ(r.v.st, state::skipped);
  EXPECT_EQ(r.times.execute, 0.0);
  EXPECT_NE(r.v.reason.find("budget 0.0 MB (--max-memory)"), std::string::npos) << r.v.reason;
}

}  // namespace
}  // namespace opval
