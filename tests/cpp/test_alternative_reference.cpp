// Judging against an alternative reference (core/alternative_reference.hpp): a float64
// reference equal to opval's own changes no verdict; one at the contract widens the bound to
// twice, and still catches a planted bug; a wrong reference fails a correct kernel and the
// reason names the reference as differing from opval's own; a problem the reference cannot
// compute is SKIPPED naming it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/alternative_reference.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"
#include "ops/op_testing.hpp"

namespace opval {
namespace {

using testing::function_backend;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Problems of several ops and contracts, with one output or several (layer_norm's statistics).
const std::vector<std::string> problems = {
    "matmul m=33 n=17 k=65 dt=bf16:f32:bf16", "matmul m=8 n=9 k=300 dt=f32", "softmax shape=7x129 axis=1 dt=f16",
    "layer_norm shape=5x64 dt=bf16:f32:bf16",  "gelu shape=1000 dt=f32",        "conv2d mb=1 ic=3 ih=9 iw=9 oc=4 kh=3 kw=3 dt=f32"};

// opval's own reference, offered as a float64 implementation: what a framework in float64 is.
std::shared_ptr<backend> own_reference_in_float64() {
  return std::make_shared<function_backend>(
      "own_f64", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) { p.spec().reference(p, in, out); });
}

// The sim's outputs with element 0 of output 0 moved by `by`: a planted bug.
std::shared_ptr<backend> sim_off_by(double by, const char* name) {
  return std::make_shared<function_backend>(name, [by](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    out[0].set_at(0, out[0].at(0) + by);
  });
}

run_options against(std::shared_ptr<backend> b, bool float64) {
  run_options o;
  o.reference = alternative_reference{std::move(b), {}, float64};
  return o;
}

TEST(alternative_reference, float64_equal_to_the_own_reference_changes_no_verdict) {
  auto sim = make_sim_backend();
  auto buggy = sim_off_by(0.25, "buggy");
  for (const std::string& line : problems) {
    const problem p = parse_problem(line);
    const run_options o = against(own_reference_in_float64(), true);
    for (backend* b : {sim.get(), buggy.get()}) {
      const case_result own = run_case(p, *b, run_options{});
      const case_result alt = run_case(p, *b, o);
      EXPECT_EQ(alt.v.st, own.v.st) << line << " on " << b->name() << ": " << alt.v.reason;
      EXPECT_EQ(alt.v.reason, own.v.reason) << line;
      EXPECT_EQ(alt.reference, "own_f64 (float64)");
      EXPECT_TRUE(contains(alt.reference_note, "max |diff| 0 (0 of the bound)")) << alt.reference_note;
    }
    EXPECT_EQ(run_case(p, *buggy, o).v.st, state::failed) << line;
  }
}

TEST(alternative_reference, at_the_contract_doubles_the_bound_and_still_catches_a_planted_bug) {
  auto sim = make_sim_backend();
  auto buggy = sim_off_by(0.25, "buggy");
  for (const std::string& line : problems) {
    const problem p = parse_problem(line);
    const run_options o = against(make_sim_backend(), false);
    const case_result good = run_case(p, *sim, o);
    EXPECT_EQ(good.v.st, state::passed) << line << ": " << good.v.reason;
    ASSERT_FALSE(good.v.outputs.empty());
    EXPECT_TRUE(good.v.outputs[0].bound.starts_with("2 x (")) << good.v.outputs[0].bound;
    EXPECT_EQ(good.reference, "sim (at the contract)");
    const case_result bad = run_case(p, *buggy, o);
    EXPECT_EQ(bad.v.st, state::failed) << line;
    EXPECT_TRUE(contains(bad.v.reason, "beyond the bound")) << bad.v.reason;
  }
}

// The sim is correct; a reference off by 1 at element 0 fails it, and the reason says that the
// reference itself lies beyond the bound from opval's own, with its value there.
TEST(alternative_reference, a_wrong_reference_is_named_in_the_reason) {
  auto sim = make_sim_backend();
  const problem p = parse_problem("matmul m=8 n=9 k=30 dt=f32");
  const case_result r = run_case(p, *sim, against(sim_off_by(1.0, "wrong_ref"), false));
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "the reference wrong_ref (at the contract) itself differs from opval's fp64 reference"))
      << r.v.reason;
  EXPECT_TRUE(contains(r.v.reason, "1 of 72 elements beyond the bound; worst at [0,0]")) << r.v.reason;
  EXPECT_TRUE(contains(r.reference_note, "wrong_ref (at the contract) vs opval's fp64 reference: output 'dst'"))
      << r.reference_note;
}

TEST(alternative_reference, a_problem_the_reference_cannot_compute_is_skipped_naming_it) {
  auto sim = make_sim_backend();
  auto refusing = std::make_shared<function_backend>(
      "refusing", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) { p.spec().simulate(p, in, out); },
      [](const problem&) { return support::skipped("no f16 here"); });
  const case_result r = run_case(parse_problem("relu shape=10 dt=f16"), *sim, against(refusing, true));
  EXPECT_EQ(r.v.st, state::skipped);
  EXPECT_EQ(r.v.reason, "the reference refusing (float64) cannot compute this problem: no f16 here");
}

// exact and fixed policies are the user's tolerance against the reference: not widened.
TEST(alternative_reference, exact_policy_against_the_same_implementation_is_bitwise) {
  auto sim = make_sim_backend();
  run_options o = against(make_sim_backend(), false);
  o.pol = parse_policy("exact");
  const case_result r = run_case(parse_problem("matmul m=8 n=9 k=300 dt=bf16:f32:bf16"), *sim, o);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_EQ(r.v.outputs[0].bound, "exact (bitwise)");
  auto buggy = sim_off_by(1e-3, "buggy");
  EXPECT_EQ(run_case(parse_problem("matmul m=8 n=9 k=300 dt=f32"), *buggy, o).v.st, state::failed);
}

}  // namespace
}  // namespace opval
