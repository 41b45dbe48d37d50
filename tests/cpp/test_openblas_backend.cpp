// The openblas backend against matmul's smoke and regression suites: every plain f32/f64
// GEMM passes (transposes, padded leading dimensions, alpha/beta, broadcast batches), every
// fused epilogue, other contract and other op is refused as UNIMPLEMENTED with a reason.
// Skipped when opval was built without OpenBLAS (the backend is then not registered).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "backend_testing.hpp"
#include "opval/backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace {

using opval::case_result;
using opval::problem;
using opval::state;

// A plain GEMM: a contract sgemm/dgemm computes and no epilogue beyond alpha/beta.
bool plain_float_gemm(const problem& p) {
  const bool f32_or_f64 = p.dt == opval::parse_contract_types("f32:f32:f32") ||
                          p.dt == opval::parse_contract_types("f64:f64:f64");
  return f32_or_f64 && !p.get_bool("bias") && p.get_choice("act") == "none" && !p.get_bool("residual");
}

// Every matmul smoke and regression case run on openblas (cached across tests).
const std::vector<case_result>& matmul_suite_results(opval::backend& b) {
  return opval::testing::suite_results(b, {"matmul"});
}

TEST(openblas_backend, identifies_library_and_core) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  EXPECT_EQ(b->name(), "openblas");
  EXPECT_NE(b->version().find("OpenBLAS"), std::string::npos) << b->version();
}

TEST(openblas_backend, matmul_suites_pass_or_are_refused_with_a_reason) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  opval::testing::expect_passed_or_refused(matmul_suite_results(*b));
}

TEST(openblas_backend, every_plain_f32_f64_gemm_passes_including_layouts_and_alpha_beta) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  int passed = 0;
  bool ta = false, tb = false, lda = false, ldc = false, alpha = false, beta = false, batch = false;
  for (const auto& c : matmul_suite_results(*b)) {
    const problem p = opval::parse_problem(c.descriptor);  // the descriptor round-trips
    if (!plain_float_gemm(p)) continue;
    EXPECT_EQ(c.v.st, state::passed) << c.descriptor << ": " << c.v.reason;
    if (c.v.st != state::passed) continue;
    ++passed;
    ta |= p.get_bool("ta");
    tb |= p.get_bool("tb");
    lda |= p.get_int("lda") != 0;
    ldc |= p.get_int("ldc") != 0;
    alpha |= p.get_real("alpha") != 1.0;
    beta |= p.get_real("beta") != 0.0;
    batch |= !p.get_dims("batch_a").empty() || !p.get_dims("batch_b").empty();
  }
  EXPECT_GT(passed, 20);
  EXPECT_TRUE(ta && tb) << "no passed case with ta=1 and tb=1";
  EXPECT_TRUE(lda && ldc) << "no passed case with padded lda and ldc";
  EXPECT_TRUE(alpha && beta) << "no passed case with alpha != 1 and beta != 0";
  EXPECT_TRUE(batch) << "no passed batched/broadcast case";
}

// The runner stops OpenBLAS's pool after the kernel's runs of every case; the next call
// starts it again, on as many threads, and computes as before (a size OpenBLAS splits across
// its threads, cases in a row, and a release by hand between two runs).
TEST(openblas_backend, its_pool_restarts_after_each_release) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  const std::optional<int> threads = b->set_threads(2);
  ASSERT_TRUE(threads.has_value());
  const problem p = opval::parse_problem("matmul m=256 n=256 k=256 dt=f32");
  for (int round = 0; round < 3; ++round) {
    const case_result r = opval::run_case(p, *b, {});
    EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
    b->release_threads();
  }
  EXPECT_EQ(b->set_threads(*threads), 2);
}

TEST(openblas_backend, names_the_routine_that_ran) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  const case_result s = opval::run_case(opval::parse_problem("matmul m=9 n=7 k=5 ta=1 dt=f32"), *b, {});
  const case_result d = opval::run_case(opval::parse_problem("matmul m=9 n=7 k=5 tb=1 dt=f64"), *b, {});
  EXPECT_EQ(s.v.st, state::passed) << s.v.reason;
  EXPECT_EQ(d.v.st, state::passed) << d.v.reason;
  EXPECT_NE(s.exec.implementation.find("cblas_sgemm"), std::string::npos) << s.exec.implementation;
  EXPECT_NE(d.exec.implementation.find("cblas_dgemm"), std::string::npos) << d.exec.implementation;
}

TEST(openblas_backend, broadcast_batch_with_transposes_and_beta_passes) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  const case_result r = opval::run_case(
      opval::parse_problem("matmul m=6 n=5 k=7 batch_a=2x1 batch_b=3 ta=1 tb=1 lda=9 ldb=8 beta=0.5 ldc=6 dt=f32"),
      *b, {});
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
}

TEST(openblas_backend, refuses_what_plain_gemm_cannot_do_naming_it) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  const auto refusal = [&](const char* line) { return opval::testing::unimplemented_reason(*b, line); };
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=bf16:f32:bf16").find("bf16"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=f32@tf32:f32:f32").find("tf32"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 bias=1 dt=f32").find("bias"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 act=relu dt=f64").find("act=relu"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 residual=1 dt=f32").find("residual"), std::string::npos);
}

TEST(openblas_backend, other_ops_are_unimplemented) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  int others = 0;
  for (const auto& lp : opval::suite_problems("smoke", {})) {
    if (lp.prob.op() == "matmul") continue;
    ++others;
    const opval::support s = b->supports(lp.prob);
    EXPECT_EQ(s.st, state::unimplemented) << lp.prob.to_string();
    EXPECT_FALSE(s.ok);
    EXPECT_NE(s.reason.find("(it runs matmul)"), std::string::npos) << s.reason;
  }
  if (others == 0) GTEST_SKIP() << "this build has no op besides matmul";
}

}  // namespace
