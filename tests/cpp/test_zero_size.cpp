// Zero-size dimensions (docs/SAFETY.md): real graphs make empty tensors (an empty batch, k=0,
// an empty reduction axis, a zero-length sequence). Every op accepts them where its definition
// does; every op's regression suite has such cases, and each passes on every backend (or is a
// documented refusal or known failure); a reduction over nothing has its identity.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_testing.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/backend.hpp"
#include "opval/error.hpp"
#include "opval/runner.hpp"

#ifndef OPVAL_CLI_PATH
#error "tests/cpp/CMakeLists.txt must define OPVAL_CLI_PATH for test_zero_size"
#endif

namespace opval {
namespace {

bool has_empty_operand(const problem& p) {
  const op_spec& spec = p.spec();
  std::vector<operand> ops = spec.inputs(p);
  for (operand& o : spec.outputs(p)) ops.push_back(std::move(o));
  return std::any_of(ops.begin(), ops.end(), [](const operand& o) { return element_count(o.shape) == 0; });
}

/// The regression suite's lines with an empty input or output, over every op.
std::vector<std::string> zero_size_suite_lines() {
  std::vector<std::string> lines;
  for (const located_problem& lp : suite_problems("regression", {}))
    if (has_empty_operand(lp.prob)) lines.push_back(lp.prob.to_string());
  return lines;
}

TEST(ZeroSize, EveryOpsRegressionSuiteHasEmptyTensors) {
  for (const op_spec* op : all_ops()) {
    bool found = false;
    for (const std::string& line : op->suite("regression"))
      found = found || has_empty_operand(parse_problem(line));
    EXPECT_TRUE(found) << op->name() << "'s regression suite has no case with an empty tensor";
  }
}

TEST(ZeroSize, ReductionsOverNothingAndEmptyOutputsPassOnTheSim) {
  // Both were wrong once: a canary "overwritten" on a zero-element output (the poison wrote
  // one element into it), and max over nothing MISTRUSTED although -inf was right.
  for (const char* line : {"reduce shape=2x0x4 axes=2 keepdims=1", "reduce shape=2x0x4 axes=1 keepdims=1 kind=max",
                           "reduce shape=2x0x4 axes=1 kind=mean", "reduce shape=2x0x4 axes=1 keepdims=0",
                           "add shape_a=0x5 shape_b=5", "matmul m=4 n=5 k=0 beta=1 bias=1", "softmax shape=4x0 axis=0"}) {
    auto sim = make_backend("sim");
    const case_result r = run_case(parse_problem(line), *sim, run_options{});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

TEST(ZeroSize, OneBroadcastsToZeroAsNumPyDoes) {
  const problem add = parse_problem("add shape_a=0x5 shape_b=5");
  EXPECT_EQ(add.spec().outputs(add)[0].shape, (dims{0, 5}));
  const problem mm = parse_problem("matmul m=4 n=5 k=3 batch_a=0x2 batch_b=1x2");
  EXPECT_EQ(mm.spec().outputs(mm)[0].shape, (dims{0, 2, 4, 5}));
}

TEST(ZeroSize, WhatNoDefinitionGivesIsBadInputNamingTheAttribute) {
  for (const char* line : {"attention b=1 h=2 lq=4 lk=0 d=8", "global_avg_pool mb=1 c=3 ih=0 iw=0",
                           "relu shape=-1", "add shape_a=2x0 shape_b=3"})
    EXPECT_THROW(parse_problem(line), error) << line;
}

class ZeroSizeOnBackend : public ::testing::TestWithParam<std::string> {};

// Through the CLI, isolated: a library that crashes on an empty tensor is a verdict, and the
// documented ones are in tests/known_failures.txt.
TEST_P(ZeroSizeOnBackend, EveryEmptyTensorCasePassesOrIsAKnownFailure) {
  const testing::scratch_dir scratch("zero_size_" + GetParam());
  const std::filesystem::path& dir = scratch.path();
  const std::vector<std::string> lines = zero_size_suite_lines();
  ASSERT_GE(lines.size(), all_ops().size());
  std::ofstream(dir / "empty.txt") << fmt::format("{}\n", fmt::join(lines, "\n"));
  const testing::cli_result r = testing::run_cli(
      OPVAL_CLI_PATH, dir,
      {"run", "--backend", GetParam(), "--problems", (dir / "empty.txt").string(), "--known-failures",
       std::string(OPVAL_SOURCE_DIR) + "/tests/known_failures.txt"});
  SCOPED_TRACE(r.out + r.err);
  if (r.err.find("is not available") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.find("CRASH"), std::string::npos);
  EXPECT_EQ(r.out.find("MISTRUSTED"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(EachCpuBackend, ZeroSizeOnBackend,
                         ::testing::Values("sim", "onednn", "openblas", "blis", "opencl"));

}  // namespace
}  // namespace opval
