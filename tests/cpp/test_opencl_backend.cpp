// The opencl backend against the smoke and regression suites of matmul, softmax and
// layer_norm: every case with f32 arithmetic on f32 or f16 storage passes (f16 ones counted
// apart), everything else is refused with a reason; an f16 output off by one ULP is caught; a
// kernel that does not compile surfaces as opval::error carrying the compiler's log. Skipped when opval
// was built without OpenCL or the machine has no OpenCL platform/device.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <span>
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
using opval::tensor;

// The problem the opencl backend SKIPs when the machine has no OpenCL platform/device.
constexpr const char* device_probe = "matmul m=4 n=4 k=4 dt=f32";

// True when a case stores an input or its output in f16 (the kernels compute in f32).
bool stores_f16(const case_result& r) {
  const opval::contract& c = opval::parse_problem(r.descriptor).dt;
  return c.src == opval::dtype::f16 || c.wei == opval::dtype::f16 || c.dst == opval::dtype::f16;
}

// Checks that no case of op FAILED or was MISTRUSTED, that refusals carry a reason, and that
// more than min_passed cases passed, more than min_f16_passed of them with f16 storage.
void expect_suite_ok(const std::string& op, int min_passed, int min_f16_passed) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  const auto& results = opval::testing::suite_results(*b, {op});
  opval::testing::expect_passed_or_refused(results);
  int f16_passed = 0;
  for (const auto& r : results) {
    if (r.v.st != state::passed) continue;
    EXPECT_NE(r.exec.implementation.find("OpenCL C"), std::string::npos) << r.exec.implementation;
    f16_passed += stores_f16(r);
  }
  EXPECT_GT(opval::testing::passed_per_op(results)[op], min_passed) << op;
  EXPECT_GT(f16_passed, min_f16_passed) << op;
}

TEST(opencl_backend, identifies_platform_and_device) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  EXPECT_EQ(b->name(), "opencl");
  EXPECT_NE(b->version().find("device"), std::string::npos) << b->version();
  EXPECT_NE(b->version().find("driver"), std::string::npos) << b->version();
}

TEST(opencl_backend, matmul_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("matmul", 30, 10); }
TEST(opencl_backend, softmax_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("softmax", 30, 10); }
TEST(opencl_backend, layer_norm_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("layer_norm", 100, 50); }

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
  EXPECT_NE(refusal("softmax shape=4x8 dt=bf16:f32:bf16").find("bf16"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=f16:f16:f16").find("f16:f16:f16"), std::string::npos);  // f16 arithmetic
  EXPECT_NE(refusal("softmax shape=4x8 dt=f16:f32:f16 dst_round=rz").find("rz"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 bias=1 dt=f32").find("bias"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 act=relu dt=f32").find("act=relu"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 residual=1 dt=f32").find("residual"), std::string::npos);
  for (const auto& lp : opval::suite_problems("smoke", {}))
    if (lp.prob.op() != "matmul" && lp.prob.op() != "softmax" && lp.prob.op() != "layer_norm")
      EXPECT_EQ(b->supports(lp.prob).st, state::unimplemented) << lp.prob.op();
}

TEST(opencl_backend, f16_storage_cases_pass) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  for (const char* line : {"matmul m=6 n=5 k=7 batch_a=2x1 batch_b=3 ta=1 lda=9 beta=0.5 dt=f16:f32:f16",
                           "matmul m=17 n=13 k=64 dt=f16:f32:f32", "softmax shape=3x5x7 axis=1 dt=f16:f32:f16",
                           "softmax shape=4x129 dt=f32:f32:f16", "layer_norm shape=3x5x7 norm_axes=2 ld=9 dt=f16:f32:f16"}) {
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

// The opencl backend with every f16 output moved one f16 ULP towards zero: what a kernel
// storing with vstore_half_rtz (or rounding twice) can do; the bound must catch it.
class one_ulp_off_backend final : public opval::backend {
 public:
  explicit one_ulp_off_backend(std::unique_ptr<opval::backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "opencl_one_ulp_off"; }
  std::string version() const override { return inner_->version(); }
  opval::support supports(const problem& p) const override { return inner_->supports(p); }
  opval::execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    const opval::execution_info info = inner_->execute(p, in, out);
    tensor& y = out[0];
    for (std::int64_t i = 0; i < y.numel(); ++i) {
      const double v = y.at(i);
      if (std::isfinite(v) && v != 0) y.set_at(i, v - std::copysign(opval::ulp(opval::dtype::f16, v), v));
    }
    return info;
  }

 private:
  std::unique_ptr<opval::backend> inner_;
};

TEST(opencl_backend, f16_output_one_ulp_off_is_caught) {
  OPVAL_BACKEND_OR_SKIP(b, "opencl", device_probe);
  one_ulp_off_backend bad(opval::make_backend("opencl"));
  for (const char* line : {"matmul m=17 n=13 k=64 dt=f16:f32:f16", "softmax shape=4x129 dt=f32:f32:f16",
                           "layer_norm shape=8x100 dt=f16:f32:f16"}) {
    ASSERT_EQ(opval::run_case(opval::parse_problem(line), *b, {}).v.st, state::passed) << line;
    const case_result r = opval::run_case(opval::parse_problem(line), bad, {});
    EXPECT_EQ(r.v.st, state::failed) << line << ": " << r.v.reason;
  }
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
