// The observed precision: a kernel that computes at a lower precision than asked fails, and
// the result names the contract it is consistent with; a kernel allowed tf32 that computes in
// full f32 is reported as such. Planted kernels are the sim of another contract.
#include <gtest/gtest.h>

#include <string>

#include "core/observed_precision.hpp"
#include "ops/op_testing.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace {

using opval::case_result;
using opval::parse_contract_types;
using opval::parse_problem;
using opval::problem;
using opval::state;
using opval::tensor;

// A kernel that emulates contract `dt` whatever the problem asks.
opval::testing::function_backend computing_as(const char* dt) {
  const opval::contract c = parse_contract_types(dt);
  return opval::testing::function_backend(std::string("as-") + dt, [c](const problem& p, std::span<const tensor> in,
                                                                        std::span<tensor> out) {
    problem q = p;
    q.dt = c;
    p.spec().simulate(q, in, out);
  });
}

case_result run(const char* line, opval::backend& b) { return opval::run_case(parse_problem(line), b, {}); }

TEST(precision_ladder, covers_reduced_inputs_and_accumulation_for_float_contracts) {
  std::vector<std::string> names;
  for (const auto& c : opval::precision_ladder(parse_contract_types("f32"))) names.push_back(c.types_string());
  EXPECT_EQ(names, (std::vector<std::string>{"f32:f32:f32", "f32@tf32:f32:f32", "f32@f16:f32:f32", "f32@bf16:f32:f32",
                                             "f32:f16:f32", "f32:bf16:f32"}));
  EXPECT_TRUE(opval::precision_ladder(parse_contract_types("u8xi8:i32:f32")).empty());
  // bf16 inputs cannot be rounded to a coarser-or-equal type in-kernel: only accumulation varies.
  EXPECT_EQ(opval::precision_ladder(parse_contract_types("bf16:f32:bf16")).size(), 3u);
}

TEST(observed_precision, names_tf32_when_an_f32_gemm_rounds_its_inputs) {
  auto b = computing_as("f32@tf32:f32:f32");
  const case_result r = run("matmul m=64 n=48 k=256 dt=f32", b);
  ASSERT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_EQ(r.observed_contract, "f32@tf32:f32:f32") << r.observed_note;
}

TEST(observed_precision, names_bf16_inputs_when_an_f32_gemm_computes_in_bf16) {
  // Short sums: the input-rounding bound is linear in k, the errors grow as sqrt(k), so only
  // for small k does bf16 rounding stand out from tf32's bound.
  auto b = computing_as("f32@bf16:f32:f32");
  const case_result r = run("matmul m=64 n=48 k=16 dt=f32", b);
  ASSERT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_EQ(r.observed_contract, "f32@bf16:f32:f32") << r.observed_note;
}

TEST(observed_precision, names_f16_accumulation) {
  auto b = computing_as("f32:f16:f32");
  // Same-sign data: f16 partial sums grow with k, their rounding outgrows any input rounding.
  const case_result r = run("matmul m=32 n=32 k=512 dt=f32 fill=positive", b);
  ASSERT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_EQ(r.observed_contract, "f32:f16:f32") << r.observed_note;
}

TEST(observed_precision, reports_full_f32_when_tf32_was_allowed_but_not_used) {
  auto b = computing_as("f32");
  const case_result r = run("matmul m=64 n=48 k=256 dt=tf32", b);
  ASSERT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_EQ(r.observed_contract, "f32:f32:f32") << r.observed_note;
}

TEST(observed_precision, says_none_met_for_a_wrong_result) {
  opval::testing::function_backend b("dropped-term", [](const problem& p, std::span<const tensor> in,
                                                        std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    out[0].set_at(0, out[0].at(0) + 1.0);
  });
  const case_result r = run("matmul m=8 n=8 k=16 dt=f32", b);
  ASSERT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(r.observed_contract.empty());
  EXPECT_NE(r.observed_note.find("within none"), std::string::npos) << r.observed_note;
}

TEST(observed_precision, is_not_measured_for_passing_full_precision_cases) {
  auto b = computing_as("f32");
  const case_result r = run("matmul m=8 n=8 k=16 dt=f32", b);
  ASSERT_EQ(r.v.st, state::passed);
  EXPECT_TRUE(r.observed_note.empty());
}

}  // namespace
