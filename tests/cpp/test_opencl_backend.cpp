// The opencl backend against the smoke and regression suites of matmul, softmax and
// layer_norm: every f32 case passes, everything else is refused with a reason; a kernel that
// does not compile surfaces as opval::error carrying the compiler's log. Skipped when opval
// was built without OpenCL or the machine has no OpenCL platform/device.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"
#ifdef OPVAL_HAVE_OPENCL
#include "backends/opencl/opencl_backend.hpp"
#endif

namespace {

using opval::case_result;
using opval::problem;
using opval::state;

// The backend, or null when this build has no OpenCL or the machine no device.
std::unique_ptr<opval::backend> opencl_or_null() {
  try {
    auto b = opval::make_backend("opencl");
    const opval::support s = b->supports(opval::parse_problem("matmul m=4 n=4 k=4 dt=f32"));
    if (!s.ok && s.st == state::skipped) return nullptr;
    return b;
  } catch (const opval::error&) {
    return nullptr;
  }
}

#define OPENCL_OR_SKIP(var)  \
  auto var = opencl_or_null(); \
  if (!var) GTEST_SKIP() << "no opencl backend in this build or no OpenCL platform/device"

// Every smoke and regression case of `op` run on opencl, computed once per op.
const std::vector<case_result>& suite_results(opval::backend& b, const std::string& op) {
  static std::map<std::string, std::vector<case_result>> cache;
  auto it = cache.find(op);
  if (it != cache.end()) return it->second;
  std::vector<case_result> out;
  for (const char* tag : {"smoke", "regression"})
    for (const auto& lp : opval::suite_problems(tag, {op})) out.push_back(opval::run_case(lp.prob, b, {}, lp.source));
  return cache.emplace(op, std::move(out)).first->second;
}

// Checks that no case of op FAILED or was MISTRUSTED, that refusals carry a reason, and that
// at least min_passed cases passed.
void expect_suite_ok(const std::string& op, int min_passed) {
  OPENCL_OR_SKIP(b);
  const auto& results = suite_results(*b, op);
  ASSERT_FALSE(results.empty());
  int passed = 0;
  for (const auto& r : results) {
    const state st = r.v.st;
    EXPECT_TRUE(st == state::passed || st == state::skipped || st == state::unimplemented)
        << r.descriptor << ": " << to_string(st) << ": " << r.v.reason << "\n  " << r.repro;
    if (st != state::passed) EXPECT_FALSE(r.v.reason.empty()) << r.descriptor;
    if (st == state::passed) {
      ++passed;
      EXPECT_NE(r.exec.implementation.find("OpenCL C"), std::string::npos) << r.exec.implementation;
    }
  }
  EXPECT_GT(passed, min_passed) << op;
}

TEST(opencl_backend, identifies_platform_and_device) {
  OPENCL_OR_SKIP(b);
  EXPECT_EQ(b->name(), "opencl");
  EXPECT_NE(b->version().find("device"), std::string::npos) << b->version();
  EXPECT_NE(b->version().find("driver"), std::string::npos) << b->version();
}

TEST(opencl_backend, matmul_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("matmul", 15); }
TEST(opencl_backend, softmax_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("softmax", 10); }
TEST(opencl_backend, layer_norm_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("layer_norm", 10); }

TEST(opencl_backend, strided_broadcast_matmul_with_beta_passes) {
  OPENCL_OR_SKIP(b);
  const case_result r = opval::run_case(
      opval::parse_problem("matmul m=6 n=5 k=7 batch_a=2x1 batch_b=3 ta=1 tb=1 lda=9 ldb=8 beta=0.5 ldc=6 dt=f32"),
      *b, {});
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_NE(r.exec.implementation.find("matmul_naive"), std::string::npos) << r.exec.implementation;
}

TEST(opencl_backend, padded_layer_norm_and_inner_axis_softmax_pass) {
  OPENCL_OR_SKIP(b);
  for (const char* line : {"layer_norm shape=3x5x7 norm_axes=2 ld=9 dt=f32", "layer_norm shape=4x33 affine=0 dt=f32",
                           "softmax shape=3x5x7 axis=1 dt=f32", "softmax shape=2x19 axis=0 dt=f32"}) {
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

TEST(opencl_backend, refuses_other_contracts_epilogues_and_ops_naming_them) {
  OPENCL_OR_SKIP(b);
  const auto refusal = [&](const char* line) {
    const opval::support s = b->supports(opval::parse_problem(line));
    EXPECT_FALSE(s.ok) << line;
    EXPECT_EQ(s.st, state::unimplemented) << line;
    return s.reason;
  };
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=bf16:f32:bf16").find("bf16"), std::string::npos);
  EXPECT_NE(refusal("softmax shape=4x8 dt=f16:f32:f16").find("f16"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 bias=1 dt=f32").find("bias"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 act=relu dt=f32").find("act=relu"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 residual=1 dt=f32").find("residual"), std::string::npos);
  for (const auto& lp : opval::suite_problems("smoke", {}))
    if (lp.prob.op() != "matmul" && lp.prob.op() != "softmax" && lp.prob.op() != "layer_norm")
      EXPECT_EQ(b->supports(lp.prob).st, state::unimplemented) << lp.prob.op();
}

#ifdef OPVAL_HAVE_OPENCL
TEST(opencl_backend, kernel_build_failure_is_an_error_with_the_compiler_log) {
  OPENCL_OR_SKIP(b);
  EXPECT_NO_THROW(opval::opencl_build_for_test("__kernel void ok(__global float* x) { x[0] = 1.0f; }"));
  try {
    opval::opencl_build_for_test("__kernel void broken(__global float* x) { x[0] = undeclared_name + ; }");
    FAIL() << "a kernel with a syntax error built";
  } catch (const opval::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("clBuildProgram failed"), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_name"), std::string::npos) << "no compiler log in: " << what;
  }
}
#endif

}  // namespace
