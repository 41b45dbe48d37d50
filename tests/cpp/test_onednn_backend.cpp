// The onednn backend against the smoke and regression suites of the ops it implements:
// every case PASSES or is refused (SKIPPED / UNIMPLEMENTED) with a reason, never FAILED or
// MISTRUSTED, enough cases of each op really run, and the verdict names oneDNN's kernel.
// Skipped when opval was built without oneDNN (the backend is then not registered).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend_testing.hpp"
#include "opval/backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace {

using opval::case_result;
using opval::state;

// Cases where oneDNN 2.6.3 itself disagrees with the contract (documented in
// docs/BACKENDS.md; reproduce one with `opval repro '<descriptor>' --seed 1 --backend onednn`),
// excluded by exact descriptor, grouped by cause.
const std::set<std::string>& known_library_disagreements() {
  static const std::set<std::string> s{
      // softmax / log_softmax with a NaN in the row: oneDNN's max reduction drops NaN, the row's other outputs come out 0 (softmax) or -inf (log_softmax) instead of NaN.
      "log_softmax shape=1x4099 dt=bf16:f32:f32 fill=special",
      "log_softmax shape=2x1000 axis=1 dt=f32:f32:f32 fill=special",
      "log_softmax shape=3x129 dt=bf16:f32:bf16 fill=special",
      "log_softmax shape=3x129 dt=bf16:f32:f32 fill=special",
      "log_softmax shape=3x129 dt=f32:f32:bf16 fill=special",
      "log_softmax shape=3x129 dt=f32:f32:f32 fill=special",
      "log_softmax shape=4x100 dt=bf16:f32:bf16 fill=special",
      "log_softmax shape=6x255 axis=1 dt=bf16:f32:bf16 fill=special",
      "softmax shape=1x4099 dt=bf16:f32:f32 fill=special",
      "softmax shape=2x1000 axis=1 dt=f32:f32:f32 fill=special",
      "softmax shape=3x129 dt=bf16:f32:bf16 fill=special",
      "softmax shape=3x129 dt=bf16:f32:f32 fill=special",
      "softmax shape=3x129 dt=f32:f32:bf16 fill=special",
      "softmax shape=3x129 dt=f32:f32:f32 fill=special",
      "softmax shape=4x100 dt=bf16:f32:bf16 fill=special",
      "softmax shape=6x255 axis=1 dt=bf16:f32:bf16 fill=special",
      // relu(NaN) = 0 in oneDNN's jit relu, the contract propagates NaN (bf16 cases: subnormals flushed too).
      "relu shape=257 dt=bf16:f32:bf16 fill=special",
      "relu shape=257 dt=f32:f32:f32 fill=special",
      "relu shape=4099 dt=bf16:f32:bf16 fill=special",
      "relu shape=4099 dt=f32:f32:f32 fill=special",
      // gelu / silu (-Inf) = NaN in oneDNN (x * 0 evaluated literally; the contract's limit is -0).
      "gelu shape=257 approximate=tanh dt=bf16:f32:bf16 fill=special",
      "gelu shape=257 approximate=tanh dt=f32:f32:f32 fill=special",
      "gelu shape=257 dt=bf16:f32:bf16 fill=special",
      "gelu shape=257 dt=f32:f32:f32 fill=special",
      "gelu shape=4099 approximate=tanh dt=bf16:f32:bf16 fill=special",
      "gelu shape=4099 approximate=tanh dt=f32:f32:f32 fill=special",
      "gelu shape=4099 dt=bf16:f32:bf16 fill=special",
      "gelu shape=4099 dt=f32:f32:f32 fill=special",
      "silu shape=257 dt=bf16:f32:bf16 fill=special",
      "silu shape=257 dt=f32:f32:f32 fill=special",
      "silu shape=4099 dt=bf16:f32:bf16 fill=special",
      "silu shape=4099 dt=f32:f32:f32 fill=special",
      // results in the subnormal range flushed to (signed) zero (exp underflow / bf16 conversion), the contract keeps IEEE subnormals.
      "mul shape_a=13x61 shape_b=61 dt=bf16:f32:bf16 fill=special",
      "mul shape_a=33x65 shape_b=65 dt=bf16:f32:bf16 fill=special",
      "silu shape=4099 dt=bf16:f32:bf16 fill=large",
      "silu shape=4099 dt=bf16:f32:bf16 fill=wide",
      "silu shape=4099 dt=f32:f32:f32 fill=large",
      "silu shape=4099 dt=f32:f32:f32 fill=wide",
      "softmax shape=16x64 dt=bf16:f32:bf16 fill=large",
      "softmax shape=2x3x4x5 axis=2 dt=f32:f32:bf16 fill=large",
      "softmax shape=3x129 dt=bf16:f32:f32 fill=large",
      "softmax shape=3x129 dt=f32:f32:f32 fill=large",
      "softmax shape=3x5x7 axis=1 dt=bf16:f32:bf16 fill=large",
      "softmax shape=4x100 dt=f32:f32:f32 fill=large",
      "softmax shape=5x17 dt=f32:f32:bf16 fill=large",
      "softmax shape=6x255 axis=1 dt=f32:f32:f32 fill=large",
      "softmax shape=7 dt=f32:f32:f32 fill=large",
      // softmax / log_softmax with a bf16 dst: errors up to ~1 bf16 ULP, beyond round-to-nearest (consistent with exp values stored in dst and rescaled in place: two roundings to bf16).
      "log_softmax shape=1 axis=0 dt=bf16:f32:bf16 fill=uniform",
      "log_softmax shape=1 axis=0 dt=f32:f32:bf16 fill=constant_rows",
      "log_softmax shape=16x64 dt=bf16:f32:bf16 fill=large",
      "log_softmax shape=1x1 dt=bf16:f32:bf16 fill=large",
      "log_softmax shape=2x1000 axis=1 dt=bf16:f32:bf16 fill=constant_rows",
      "log_softmax shape=2x1000 axis=1 dt=f32:f32:bf16 fill=uniform",
      "log_softmax shape=2x31x3 axis=1 dt=bf16:f32:bf16 fill=uniform",
      "log_softmax shape=2x31x3 axis=1 dt=f32:f32:bf16 fill=constant_rows",
      "log_softmax shape=2x3x31 axis=-2 dt=f32:f32:bf16 fill=normal",
      "log_softmax shape=3x1 axis=1 dt=bf16:f32:bf16 fill=constant_rows",
      "log_softmax shape=3x1 axis=1 dt=f32:f32:bf16 fill=uniform",
      "log_softmax shape=3x129 dt=bf16:f32:bf16 fill=constant_rows",
      "log_softmax shape=3x129 dt=bf16:f32:bf16 fill=large",
      "log_softmax shape=3x129 dt=bf16:f32:bf16 fill=normal",
      "log_softmax shape=3x129 dt=bf16:f32:bf16 fill=uniform",
      "log_softmax shape=3x129 dt=f32:f32:bf16 fill=constant_rows",
      "log_softmax shape=3x129 dt=f32:f32:bf16 fill=large",
      "log_softmax shape=3x129 dt=f32:f32:bf16 fill=normal",
      "log_softmax shape=3x129 dt=f32:f32:bf16 fill=uniform",
      "log_softmax shape=3x2x2x37 axis=-4 dt=bf16:f32:bf16 fill=normal",
      "log_softmax shape=3x2x2x37 axis=-4 dt=f32:f32:bf16 fill=special",
      "log_softmax shape=4x100 dt=f32:f32:bf16 fill=normal",
      "log_softmax shape=5x17 axis=0 dt=bf16:f32:bf16 fill=normal",
      "log_softmax shape=5x17 axis=0 dt=f32:f32:bf16 fill=special",
      "log_softmax shape=6x255 axis=1 dt=f32:f32:bf16 fill=normal",
      "softmax shape=1x4099 dt=bf16:f32:bf16 fill=uniform",
      "softmax shape=2x1000 axis=1 dt=bf16:f32:bf16 fill=constant_rows",
      "softmax shape=2x1000 axis=1 dt=f32:f32:bf16 fill=uniform",
      "softmax shape=2x31x3 axis=1 dt=bf16:f32:bf16 fill=uniform",
      "softmax shape=2x31x3 axis=1 dt=f32:f32:bf16 fill=constant_rows",
      "softmax shape=2x3x31 axis=-2 dt=f32:f32:bf16 fill=normal",
      "softmax shape=3x129 dt=bf16:f32:bf16 fill=constant_rows",
      "softmax shape=3x129 dt=bf16:f32:bf16 fill=large",
      "softmax shape=3x129 dt=bf16:f32:bf16 fill=normal",
      "softmax shape=3x129 dt=bf16:f32:bf16 fill=uniform",
      "softmax shape=3x129 dt=f32:f32:bf16 fill=constant_rows",
      "softmax shape=3x129 dt=f32:f32:bf16 fill=large",
      "softmax shape=3x129 dt=f32:f32:bf16 fill=normal",
      "softmax shape=3x129 dt=f32:f32:bf16 fill=uniform",
      "softmax shape=3x2x2x37 axis=-4 dt=bf16:f32:bf16 fill=normal",
      "softmax shape=3x2x2x37 axis=-4 dt=f32:f32:bf16 fill=special",
      "softmax shape=4x100 dt=f32:f32:bf16 fill=normal",
      "softmax shape=5x17 axis=0 dt=bf16:f32:bf16 fill=normal",
      "softmax shape=5x17 axis=0 dt=f32:f32:bf16 fill=special",
      "softmax shape=6x255 axis=1 dt=f32:f32:bf16 fill=normal",
      // log_softmax: oneDNN's log is off by ~1.4e-6 absolute (log(1) = -1.43e-6; 12-28 f32 ULP), beyond the contract's ulp budget for log.
      "log_softmax shape=1 axis=0 dt=bf16:f32:f32 fill=special",
      "log_softmax shape=1 axis=0 dt=f32:f32:f32 fill=normal",
      "log_softmax shape=1x1 dt=bf16:f32:f32 fill=constant_rows",
      "log_softmax shape=1x1 dt=f32:f32:f32 fill=uniform",
      "log_softmax shape=3x1 axis=1 dt=bf16:f32:f32 fill=normal",
      "log_softmax shape=3x1 axis=1 dt=f32:f32:f32 fill=special",
      "log_softmax shape=5x17 dt=bf16:f32:f32 fill=uniform",
      "log_softmax shape=5x17 dt=f32:f32:f32 fill=constant_rows",
      "log_softmax shape=7 dt=f32:f32:f32 fill=large",
      // gelu (erf form) f32: 3-7 f32 ULP from oneDNN's erf approximation, beyond the contract's erf ulp budget.
      "gelu dt=f32:f32:f32",
      "gelu shape=127 dt=f32:f32:f32",
      "gelu shape=17 dt=f32:f32:f32",
      "gelu shape=257 dt=f32:f32:f32",
      "gelu shape=31 dt=f32:f32:f32",
      "gelu shape=33x65 dt=f32:f32:f32",
      "gelu shape=3x100003 dt=f32:f32:f32",
      "gelu shape=3x5x7x11 dt=f32:f32:f32",
      "gelu shape=4099 dt=f32:f32:f32",
      "gelu shape=4099 dt=f32:f32:f32 fill=cancel",
      "gelu shape=4099 dt=f32:f32:f32 fill=positive",
      "gelu shape=4099 dt=f32:f32:f32 fill=uniform",
      "gelu shape=4099 dt=f32:f32:f32 fill=wide",
      "gelu shape=65537 dt=f32:f32:f32",
  };
  return s;
}

// The fewest PASSED cases each implemented op must reach over its smoke + regression suites.
const std::map<std::string, int>& min_passed() {
  static const std::map<std::string, int> m{{"matmul", 30}, {"softmax", 5}, {"log_softmax", 5},
                                            {"relu", 3},    {"gelu", 3},    {"silu", 3},
                                            {"add", 5},     {"mul", 5}};
  return m;
}

// Every smoke and regression case of the implemented ops but the known disagreements, run on
// onednn (cached across tests).
const std::vector<case_result>& suite_results(opval::backend& b) {
  std::vector<std::string> ops;
  for (const auto& [op, n] : min_passed()) ops.push_back(op);
  return opval::testing::suite_results(b, ops, known_library_disagreements());
}

TEST(onednn_backend, identifies_library_version) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  EXPECT_EQ(b->name(), "onednn");
  EXPECT_NE(b->version().find("oneDNN "), std::string::npos) << b->version();
}

TEST(onednn_backend, suites_pass_or_are_refused_with_a_reason) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_passed_or_refused(suite_results(*b));
}

TEST(onednn_backend, each_implemented_op_really_runs) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  std::map<std::string, int> passed = opval::testing::passed_per_op(suite_results(*b));
  for (const auto& [op, n] : min_passed()) {
    if (opval::suite_problems("smoke", {op}).empty()) continue;  // op not in this build
    EXPECT_GE(passed[op], n) << op;
  }
}

TEST(onednn_backend, names_the_onednn_kernel_that_ran) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  const case_result r = opval::run_case(
      opval::parse_problem("matmul m=6 n=5 k=7 batch_a=2x1 batch_b=3 ta=1 tb=1 lda=9 ldb=8 beta=0.5 ldc=6 dt=f32"),
      *b, {});
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  const std::string& impl = r.exec.implementation;
  EXPECT_NE(impl.find("oneDNN"), std::string::npos) << impl;
  const bool names_kernel = impl.find("brg") != std::string::npos || impl.find("gemm") != std::string::npos ||
                            impl.find("jit") != std::string::npos || impl.find("ref") != std::string::npos;
  EXPECT_TRUE(names_kernel) << impl;
  EXPECT_NE(impl.find("fpmath strict"), std::string::npos) << impl;
}

TEST(onednn_backend, fused_epilogue_passes) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  for (const char* line : {"matmul m=17 n=13 k=29 bias=1 act=relu residual=1 dt=f32",
                           "matmul m=8 n=9 k=31 beta=1.5 act=gelu dt=f32",
                           "matmul m=8 n=9 k=31 alpha=0.5 act=silu dt=f32",
                           "matmul m=8 n=9 k=31 act=gelu_tanh residual=1 dt=f32"}) {
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

TEST(onednn_backend, refuses_what_it_does_not_implement_naming_it) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  const auto refusal = [&](const char* line) { return opval::testing::unimplemented_reason(*b, line); };
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=f32@tf32:f32:f32").find("tf32"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=u8xi8:i32:f32").find("u8"), std::string::npos);
  for (const auto& lp : opval::suite_problems("smoke", {"layer_norm", "conv2d", "attention"})) {
    const opval::support s = b->supports(lp.prob);
    EXPECT_EQ(s.st, state::unimplemented) << lp.prob.to_string();
    EXPECT_NE(s.reason.find("not implemented yet"), std::string::npos) << s.reason;
  }
}

}  // namespace
