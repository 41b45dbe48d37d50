// The opencl backend against the smoke and regression suites of matmul, softmax and
// layer_norm: every f32 case passes, everything else is refused with a reason; a kernel that
// does not compile surfaces as opval::error carrying the compiler's log. Skipped when opval
// was built without OpenCL or the machine has no OpenCL platform/device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_testing.hpp"
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

// The problem the opencl backend SKIPs when the machine has no OpenCL platform/device.
constexpr const char* device_probe = "matmul m=4 n=4 k=4 dt=f32";

// Checks that no case of op FAILED or was MISTRUSTED, that refusals carry a reason, and that
// at least min_passed cases passed.
void expect_suite_ok(const std::string& op, int min_passed) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  const auto& results = opval::testing::suite_results(*b, {op});
  opval::testing::expect_passed_or_refused(results);
  for (const auto& r : results)
    if (r.v.st == state::passed)
      EXPECT_NE(r.exec.implementation.find("OpenCL C"), std::string::npos) << r.exec.implementation;
  EXPECT_GT(opval::testing::passed_per_op(results)[op], min_passed) << op;
}

TEST(opencl_backend, identifies_platform_and_device) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  EXPECT_EQ(b->name(), "opencl");
  EXPECT_NE(b->version().find("device"), std::string::npos) << b->version();
  EXPECT_NE(b->version().find("driver"), std::string::npos) << b->version();
}

TEST(opencl_backend, matmul_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("matmul", 15); }
TEST(opencl_backend, softmax_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("softmax", 10); }
TEST(opencl_backend, layer_norm_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("layer_norm", 10); }

TEST(opencl_backend, strided_broadcast_matmul_with_beta_passes) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  const case_result r = opval::run_case(
      opval::parse_problem("matmul m=6 n=5 k=7 batch_a=2x1 batch_b=3 ta=1 tb=1 lda=9 ldb=8 beta=0.5 ldc=6 dt=f32"),
      *b, {});
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_NE(r.exec.implementation.find("matmul_naive"), std::string::npos) << r.exec.implementation;
}

TEST(opencl_backend, padded_layer_norm_and_inner_axis_softmax_pass) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  for (const char* line : {"layer_norm shape=3x5x7 norm_axes=2 ld=9 dt=f32", "layer_norm shape=4x33 affine=0 dt=f32",
                           "softmax shape=3x5x7 axis=1 dt=f32", "softmax shape=2x19 axis=0 dt=f32"}) {
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

TEST(opencl_backend, refuses_other_contracts_epilogues_and_ops_naming_them) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  const auto refusal = [&](const char* line) { return opval::testing::unimplemented_reason(*b, line); };
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
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
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
