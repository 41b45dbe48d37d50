// run_case end to end: verdicts for correct, input-blind, throwing and refusing backends,
// every policy, the relative-to-sim fallback, suite expansion, and how the states of several
// outputs combine.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "opval/error.hpp"
#include "core/fill.hpp"
#include "opval/policy.hpp"
#include "ops/op_testing.hpp"

namespace {

using opval::case_result;
using opval::parse_problem;
using opval::problem;
using opval::run_options;
using opval::state;
using opval::tensor;
using opval::testing::function_backend;

constexpr const char* bf16_matmul = "matmul m=33 n=17 k=65 dt=bf16:f32:bf16";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

case_result run(const problem& p, opval::backend& b, const run_options& o = {}) { return opval::run_case(p, b, o); }
case_result run(const std::string& line, opval::backend& b, const run_options& o = {}) {
  return run(parse_problem(line), b, o);
}
run_options with_policy(const char* text) {
  run_options o;
  o.pol = opval::parse_policy(text);
  return o;
}

// The sim's outputs followed by a change: the kernel of a planted bug.
opval::testing::kernel_fn sim_then(std::function<void(std::span<tensor>)> change) {
  return [change](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    change(out);
  };
}

TEST(run_case, sim_passes_with_timings_and_repro) {
  auto sim = opval::make_backend("sim");
  run_options o;
  o.seed = 42;
  const case_result r = run(bf16_matmul, *sim, o);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_EQ(r.op, "matmul");
  EXPECT_EQ(r.backend, "sim");
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.descriptor, parse_problem(bf16_matmul).to_string());
  EXPECT_TRUE(contains(r.repro, r.descriptor)) << r.repro;
  EXPECT_TRUE(contains(r.repro, "--seed 42")) << r.repro;
  EXPECT_TRUE(contains(r.repro, "--backend sim")) << r.repro;
  EXPECT_GT(r.times.fill, 0);
  EXPECT_GT(r.times.execute, 0);
  EXPECT_GT(r.times.reference, 0);
  EXPECT_GT(r.times.bound, 0);
  EXPECT_GT(r.times.compare, 0);
  EXPECT_GE(r.times.total, r.times.fill + r.times.execute + r.times.reference + r.times.bound + r.times.compare);
  ASSERT_EQ(r.v.outputs.size(), 1u);
  const auto& out = r.v.outputs[0];
  EXPECT_EQ(out.name, "dst");
  EXPECT_EQ(out.st, state::passed);
  EXPECT_EQ(out.m.count, 33 * 17);
  EXPECT_EQ(out.m.beyond_bound, 0);
  EXPECT_GT(out.m.max_error_over_bound, 0);  // a real bf16 rounding error was measured
  EXPECT_FALSE(out.bound.empty());
  EXPECT_EQ(r.v.policy.rfind("bound", 0), 0u) << r.v.policy;
  EXPECT_TRUE(r.v.policy_note.empty()) << r.v.policy_note;  // no fallback here
}

TEST(run_case, all_zero_output_is_mistrusted) {
  function_backend zeros("zeros", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    for (std::int64_t i = 0; i < out[0].numel(); ++i) out[0].set_at(i, 0.0);
  });
  const case_result r = run(bf16_matmul, zeros);
  EXPECT_EQ(r.v.st, state::mistrusted) << r.v.reason;
  EXPECT_TRUE(contains(r.v.reason, "all zeros")) << r.v.reason;
  // A kernel that writes nothing at all is told apart by the poisoned outputs.
  function_backend idle("idle", [](const problem&, std::span<const tensor>, std::span<tensor>) {});
  const case_result never = run(bf16_matmul, idle);
  EXPECT_EQ(never.v.st, state::failed) << never.v.reason;
  EXPECT_TRUE(contains(never.v.reason, "561 of 561 elements never written")) << never.v.reason;
}

TEST(run_case, constant_output_is_mistrusted) {
  function_backend constant("constant", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    for (std::int64_t i = 0; i < out[0].numel(); ++i) out[0].set_at(i, 1.5);
  });
  const case_result r = run(bf16_matmul, constant);
  EXPECT_EQ(r.v.st, state::mistrusted) << r.v.reason;
  EXPECT_TRUE(contains(r.v.reason, "constant")) << r.v.reason;
}

// A kernel that replays the outputs it computed on its first call, whatever its inputs.
function_backend replaying_backend() {
  auto recorded = std::make_shared<std::vector<std::vector<double>>>();
  return function_backend("replay", [recorded](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    if (recorded->empty()) {
      p.spec().simulate(p, in, out);
      for (const auto& t : out) recorded->push_back(t.to_vector());
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i].assign((*recorded)[i]);
  });
}

TEST(run_case, input_blind_output_is_caught_by_the_perturbation_check) {
  // Record on seed 1, then judge seed 1: the replayed output is the right one for these inputs,
  // so only the re-run with a perturbed input can tell.
  function_backend replay = replaying_backend();
  auto sim = opval::make_backend("sim");
  ASSERT_EQ(run(bf16_matmul, replay).v.st, state::mistrusted);
  const case_result r = run(bf16_matmul, replay);
  EXPECT_EQ(r.v.st, state::mistrusted) << r.v.reason;
  EXPECT_TRUE(contains(r.v.reason, "bitwise identical")) << r.v.reason;
  EXPECT_TRUE(contains(r.v.reason, "re-filled")) << r.v.reason;
  // Without the check the same backend passes: the perturbation is what caught it.
  run_options no_check;
  no_check.perturb_check = false;
  EXPECT_EQ(run(bf16_matmul, replay, no_check).v.st, state::passed);
  // And a correct kernel survives the check.
  EXPECT_EQ(run(bf16_matmul, *sim).v.st, state::passed);
  // On other inputs the replayed output is simply wrong.
  run_options seed2 = no_check;
  seed2.seed = 2;
  EXPECT_EQ(run(bf16_matmul, replay, seed2).v.st, state::failed);
}

TEST(run_case, throwing_backend_fails_with_its_message_and_the_run_continues) {
  function_backend thrower("thrower", [](const problem&, std::span<const tensor>, std::span<tensor>) {
    throw std::runtime_error("kernel exploded: no tile for k=65");
  });
  auto sim = opval::make_backend("sim");
  std::vector<state> states;
  for (opval::backend* b : std::initializer_list<opval::backend*>{&thrower, sim.get(), &thrower}) {
    const case_result r = run(bf16_matmul, *b);
    states.push_back(r.v.st);
    if (b == &thrower) EXPECT_TRUE(contains(r.v.reason, "kernel exploded: no tile for k=65")) << r.v.reason;
  }
  EXPECT_EQ(states, (std::vector<state>{state::failed, state::passed, state::failed}));
}

// A backend that refuses every problem with a fixed answer and counts executions.
class refusing_backend final : public opval::backend {
 public:
  explicit refusing_backend(opval::support s) : s_(std::move(s)) {}
  std::string name() const override { return "refusing"; }
  std::string version() const override { return "0"; }
  opval::support supports(const problem&) const override { return s_; }
  opval::execution_info execute(const problem&, std::span<const tensor>, std::span<tensor>) override {
    ++executions;
    return {};
  }
  int executions = 0;

 private:
  opval::support s_;
};

// The sim, recording the runner's calls: what ran when.
class recording_backend final : public opval::backend {
 public:
  std::string name() const override { return "recording"; }
  std::string version() const override { return "0"; }
  opval::support supports(const problem& p) const override { return sim_->supports(p); }
  opval::execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    calls.push_back("execute");
    return sim_->execute(p, in, out);
  }
  void release_threads() override { calls.push_back("release"); }
  std::vector<std::string> calls;

 private:
  std::unique_ptr<opval::backend> sim_ = opval::make_backend("sim");
};

// The backend's pool is released before the runner's own work: the fill, and once the kernel's
// runs (the first, the second poisoned one) are over; the perturbation re-run comes after the
// verdict.
TEST(run_case, the_backend_releases_its_threads_after_the_kernel_runs) {
  recording_backend full;
  EXPECT_EQ(run(bf16_matmul, full).v.st, state::passed);
  EXPECT_EQ(full.calls, (std::vector<std::string>{"release", "execute", "execute", "release", "execute"}));
  recording_backend sampled;
  run_options o;
  o.verify = "sampled";
  EXPECT_EQ(run(bf16_matmul, sampled, o).v.st, state::passed);
  EXPECT_EQ(sampled.calls, (std::vector<std::string>{"release", "execute", "release"}));
}

TEST(run_case, unsupported_problems_are_skipped_or_unimplemented_with_the_reason) {
  refusing_backend skip(opval::support::skipped("this CPU has no bf16 dot product"));
  const case_result s = run(bf16_matmul, skip);
  EXPECT_EQ(s.v.st, state::skipped);
  EXPECT_EQ(s.v.reason, "this CPU has no bf16 dot product");
  refusing_backend unimpl(opval::support::unimplemented("no matmul kernel for k=65"));
  const case_result u = run(bf16_matmul, unimpl);
  EXPECT_EQ(u.v.st, state::unimplemented);
  EXPECT_EQ(u.v.reason, "no matmul kernel for k=65");
  EXPECT_EQ(skip.executions + unimpl.executions, 0);
}

TEST(run_case, exact_policy) {
  auto sim = opval::make_backend("sim");
  const run_options exact = with_policy("exact");
  // Small integers, i32 accumulation: every result is exact.
  const case_result ok = run("matmul m=8 n=9 k=16 dt=i8xi8:i32:f32 fill=exact", *sim, exact);
  EXPECT_EQ(ok.v.st, state::passed) << ok.v.reason;
  EXPECT_TRUE(contains(ok.v.policy, "exact")) << ok.v.policy;
  EXPECT_EQ(ok.v.outputs.at(0).m.max_abs_error, 0.0);
  // Normal data rounds: a correct kernel is not bitwise exact.
  const case_result bad = run("matmul m=8 n=9 k=16 dt=bf16:f32:bf16 fill=normal", *sim, exact);
  EXPECT_EQ(bad.v.st, state::failed);
  EXPECT_TRUE(contains(bad.v.reason, "exact")) << bad.v.reason;
}

TEST(run_case, fixed_policy_names_itself_when_it_fails_a_correct_kernel) {
  auto sim = opval::make_backend("sim");
  const case_result tight = run(bf16_matmul, *sim, with_policy("fixed:rtol=1e-7,atol=0"));
  EXPECT_EQ(tight.v.st, state::failed);
  EXPECT_TRUE(contains(tight.v.reason, "fixed")) << tight.v.reason;
  EXPECT_TRUE(contains(tight.v.outputs.at(0).bound, "fixed")) << tight.v.outputs.at(0).bound;
  EXPECT_EQ(run(bf16_matmul, *sim, with_policy("fixed:rtol=1e-2,atol=1e-3")).v.st, state::passed);
}

TEST(run_case, relative_to_sim_policy) {
  auto sim = opval::make_backend("sim");
  const run_options rel = with_policy("relative-to-sim");
  const case_result r = run(bf16_matmul, *sim, rel);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_TRUE(contains(r.v.policy, "relative-to-sim")) << r.v.policy;
  EXPECT_TRUE(contains(r.v.outputs.at(0).bound, "relative-to-sim")) << r.v.outputs.at(0).bound;
  // One element 100 ULPs off is more than twice the sim's error.
  function_backend off("off", sim_then([](std::span<tensor> out) {
    const double v = out[0].at(5);
    out[0].set_at(5, v + 100 * opval::ulp(opval::dtype::bf16, v));
  }));
  const case_result bad = run(bf16_matmul, off, rel);
  EXPECT_EQ(bad.v.st, state::failed) << bad.v.reason;
}

TEST(run_case, no_meaningful_bound_falls_back_to_relative_to_sim_and_says_why) {
  // f16 accumulation over k = 4096: n*u_acc = 2 >= 0.5.
  auto sim = opval::make_backend("sim");
  const case_result r = run("matmul m=4 n=4 k=4096 dt=f16:f16:f16", *sim);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  // The policy stays the one given; the fallback is its note.
  EXPECT_EQ(r.v.policy, opval::policy{}.to_string());
  EXPECT_TRUE(contains(r.v.policy_note, "relative-to-sim")) << r.v.policy_note;
  EXPECT_TRUE(contains(r.v.policy_note, "n*u_acc")) << r.v.policy_note;
  EXPECT_TRUE(contains(r.v.outputs.at(0).bound, "relative-to-sim")) << r.v.outputs.at(0).bound;
  // The fallback judges: an output far from the sim's fails.
  function_backend off("off", sim_then([](std::span<tensor> out) {
    for (std::int64_t i = 0; i < out[0].numel(); ++i) out[0].set_at(i, out[0].at(i) * 1.5 + 1.0);
  }));
  EXPECT_EQ(run("matmul m=4 n=4 k=4096 dt=f16:f16:f16", off).v.st, state::failed);
}

TEST(suite_problems, smoke_covers_every_op_and_rejects_unknown_names) {
  const auto problems = opval::suite_problems("smoke", {});
  for (const opval::op_spec* spec : opval::all_ops()) {
    int n = 0;
    for (const auto& lp : problems) n += lp.prob.op() == spec->name();
    EXPECT_GT(n, 0) << spec->name() << " has no smoke problems";
  }
  for (const auto& lp : problems) EXPECT_FALSE(lp.source.empty());
  const auto only = opval::suite_problems("smoke", {"matmul"});
  ASSERT_FALSE(only.empty());
  for (const auto& lp : only) EXPECT_EQ(lp.prob.op(), "matmul");
  EXPECT_THROW(opval::suite_problems("smoke", {"no_such_op"}), opval::error);
  EXPECT_THROW(opval::suite_problems("smoke", {"matmul", "no_such_op"}), opval::error);
}

// --- several outputs ----------------------------------------------------------------------

// A test-only op with two outputs, a = 2x and b = x + 1, so that verdicts of several outputs
// can be checked; it is not registered, so suites and listings never see it.
class twin_spec final : public opval::op_spec {
 public:
  std::string_view name() const override { return "twin_test"; }
  std::string_view summary() const override { return "two outputs: 2x and x+1"; }
  const opval::attr_schema& schema() const override { return schema_; }
  std::vector<std::string> contracts() const override { return {"f32"}; }
  void validate(const problem&) const override {}
  std::vector<opval::operand> inputs(const problem& p) const override {
    return {{"x", p.dt.src, {p.get_int("n")}, {}}};
  }
  std::vector<opval::operand> outputs(const problem& p) const override {
    return {{"a", p.dt.dst, {p.get_int("n")}, {}}, {"b", p.dt.dst, {p.get_int("n")}, {}}};
  }
  opval::op_counts counts(const problem& p) const override { return {2.0 * p.get_int("n"), 0}; }
  opval::fill_traits fill(const problem&, std::uint64_t seed, std::span<tensor> in) const override {
    opval::fill_tensor(in[0], opval::fill_params{}, seed, 0);
    return {};
  }
  void reference(const problem&, std::span<const tensor> in, std::span<tensor> out) const override {
    compute(in[0], out);
  }
  void simulate(const problem&, std::span<const tensor> in, std::span<tensor> out) const override {
    compute(in[0], out);
  }
  std::vector<opval::error_bound> bound(const problem&, const opval::fill_traits&, const opval::bound_options&,
                                        std::span<const tensor>, std::span<const tensor> ref) const override {
    std::vector<opval::error_bound> b;
    for (const auto& r : ref) b.push_back({tensor(opval::dtype::f64, r.shape()), "exact before rounding"});
    return b;
  }
  std::vector<std::string> suite(std::string_view) const override { return {}; }

 private:
  static void compute(const tensor& x, std::span<tensor> out) {
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      out[0].set_at(i, 2 * x.at(i));
      out[1].set_at(i, x.at(i) + 1);
    }
  }
  opval::attr_schema schema_{opval::int_attr("n", 64, "length", 1)};
};

problem twin_problem() {
  static const twin_spec spec;
  problem p(spec);
  p.dt = opval::parse_contract_types("f32");
  return p;
}

TEST(run_case_outputs, case_state_is_the_worst_of_its_outputs) {
  auto sim = opval::make_backend("sim");
  const case_result ok = run(twin_problem(), *sim);
  EXPECT_EQ(ok.v.st, state::passed) << ok.v.reason;
  ASSERT_EQ(ok.v.outputs.size(), 2u);

  // Only b is wrong: the case fails for b's reason, a still passes.
  function_backend b_wrong("b_wrong", sim_then([](std::span<tensor> out) { out[1].set_at(3, out[1].at(3) + 0.5); }));
  const case_result failed = run(twin_problem(), b_wrong);
  ASSERT_EQ(failed.v.outputs.size(), 2u);
  EXPECT_EQ(failed.v.outputs[0].st, state::passed);
  EXPECT_EQ(failed.v.outputs[1].st, state::failed);
  EXPECT_EQ(failed.v.st, state::failed);
  EXPECT_EQ(failed.v.reason, failed.v.outputs[1].reason);
  EXPECT_TRUE(contains(failed.v.reason, "'b'")) << failed.v.reason;
  EXPECT_TRUE(contains(failed.v.reason, "[3]")) << failed.v.reason;

  // a all zeros (mistrusted) and b wrong (failed): mistrusted wins; the first reason is a's.
  function_backend both_wrong("both_wrong", sim_then([](std::span<tensor> out) {
    for (std::int64_t i = 0; i < out[0].numel(); ++i) out[0].set_at(i, 0.0);
    out[1].set_at(3, out[1].at(3) + 0.5);
  }));
  const case_result mistrusted = run(twin_problem(), both_wrong);
  ASSERT_EQ(mistrusted.v.outputs.size(), 2u);
  EXPECT_EQ(mistrusted.v.outputs[0].st, state::mistrusted);
  EXPECT_EQ(mistrusted.v.outputs[1].st, state::failed);
  EXPECT_EQ(mistrusted.v.st, state::mistrusted);
  EXPECT_TRUE(contains(mistrusted.v.reason, "'a'")) << mistrusted.v.reason;

  // Order does not matter: b mistrusted after a failed is still mistrusted.
  function_backend reversed("reversed", sim_then([](std::span<tensor> out) {
    out[0].set_at(3, out[0].at(3) + 0.5);
    for (std::int64_t i = 0; i < out[1].numel(); ++i) out[1].set_at(i, 0.0);
  }));
  const case_result rev = run(twin_problem(), reversed);
  EXPECT_EQ(rev.v.st, state::mistrusted);
  EXPECT_TRUE(contains(rev.v.reason, "'a'")) << rev.v.reason;  // the first failing output's reason
}

}  // namespace
