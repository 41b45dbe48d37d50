#include "core/output_judging.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/backend_run.hpp"
#include "core/failure_hypotheses.hpp"
#include "core/observed_precision.hpp"
#include "core/tolerance_policy.hpp"
#include "core/timed.hpp"
#include "opval/error.hpp"
#include "core/error_model.hpp"

namespace opval::detail {
namespace {

// Against an alternative reference with the contract's rounding, whose own error adds to the
// kernel's, the bound doubles (|kernel - alt| <= |kernel - exact| + |alt - exact|) and the
// rounding-bias test, which needs exact values, does not apply. A policy with its own
// tolerance (exact, fixed) is taken as the user's tolerance against that reference.
void widen_for_reference(judgement& j, const std::string& name, const reference_values& ref,
                         const tolerance_policy& tolerance) {
  if (!ref.rounded || !tolerance.widens_for_reference()) return;
  const double factor = ref.bound_factor();
  j.total = map_reference(j.total, [&](std::int64_t, double b) { return factor * b; });
  j.bound_text = fmt::format("{:g} x ({}), as the reference {} has the contract's rounding error too", factor,
                             j.bound_text, name);
  j.bias_skip = "judged against another rounded result, not exact values";
}

// Records how far the alternative reference lies from the op's own, and names it in the
// reason of a case that did not pass, when it is beyond the bound: the reference, not only
// the kernel, may be what differs.
void explain_reference(case_result& r, const std::vector<std::string>& agreement, bool disagree) {
  r.reference_note = fmt::format("{} vs opval's fp64 reference: {}", r.reference, fmt::join(agreement, "; "));
  if (disagree && r.v.st != state::passed)
    r.v.reason += fmt::format("; the reference {} itself differs from opval's fp64 reference ({})", r.reference,
                              fmt::join(agreement, "; "));
}

// A sample's worst elements named by their places in the problem it was drawn from.
void relocate(metrics& m, std::size_t output, const std::function<dims(std::size_t, const dims&)>& place) {
  for (worst_element& w : m.worst) w.index = place(output, w.index);
}

// A failure whose every element a known wrong mechanism reproduces says so in its reason.
void explain_by_hypothesis(const judging_input& in, const std::vector<judgement>& js, case_result& r) {
  std::vector<const tensor*> bounds;
  for (const judgement& j : js) bounds.push_back(&j.total);
  const std::string why = matching_hypothesis(in.p, in.ins, in.refs, in.outs, bounds);
  if (!why.empty()) r.v.reason += "; every element is as if computed with " + why;
}

// A comparison with special values or results beyond the bound, under a contract that may
// change special values: judged again with the contract's own values allowed there.
bool needs_contract_values(const problem& p, const metrics& m) {
  return (m.nan_mismatch || m.inf_mismatch || m.beyond_bound) && contract_changes_specials(p.dt);
}

// A failure judged with the contract's values allowed names what the contract gives at the
// worst element where that differs from the reference's value.
void explain_contract_values(output_verdict& ov, const tensor& contract_values) {
  if (ov.st != state::failed || ov.m.worst.empty()) return;
  const worst_element& w = ov.m.worst.front();
  const double c = contract_values.get(w.index);
  if (c == w.expected || (std::isnan(c) && std::isnan(w.expected))) return;
  ov.reason += fmt::format("; the contract's rounded or flushed inputs (or rz) give {:.9g} at {}, also accepted", c,
                           format_index(w.index));
}

// The op's posterior tests (op_spec::posterior), made under the bound policy against opval's
// own reference: an alternative reference or a user's tolerance has no error model to sharpen.
std::vector<posterior_check> posterior_checks(const judging_input& in, const run_options& o, case_result& r) {
  if (o.pol.kind != policy_kind::bound || in.alt) return {};
  const bound_options bo{o.pol.false_alarm, o.pol.random_data};
  return timed(phase::bound, r.times.bound,
               [&] { return in.p.spec().posterior(in.p, in.ft, bo, in.ins, in.refs, in.outs); });
}

// One posterior test of an output: compared like the output itself (no bias test: the
// transformed values are not the kernel's roundings), failed on any element beyond its bound.
output_check judge_check(const posterior_check& pc, const output_verdict& ov, const run_options& o, dtype dst,
                         case_result& r) {
  const compare_input ci{&pc.got, &pc.expected, &pc.bound, nullptr, dst, o.worst_k, o.pol.bias_z,
                         o.pol.bias_min_ulps, false, "a transformed output, not the kernel's own roundings"};
  output_check c{.name = pc.name, .bound = pc.formula};
  c.m = timed(phase::compare, r.times.compare, [&] { return compare_outputs(ci); });
  output_verdict as_output{.name = ov.name, .bound = pc.formula, .m = c.m};
  decide(as_output);  // beyond the bound or a NaN/Inf mismatch: FAILED; the MISTRUSTED tests are the output's
  if (as_output.st != state::failed) return c;
  c.st = state::failed;
  c.reason = fmt::format("{} test: {}; {}", pc.name, as_output.reason, pc.on_failure);
  return c;
}

// The output's verdict with its posterior tests: the worst state of all, the element-wise
// reason first; an element-wise failure whose tests all pass says what that means.
void add_checks(output_verdict& ov, std::vector<output_check> checks, std::span<const posterior_check> made) {
  const bool failed_alone = ov.st == state::failed;
  for (std::size_t k = 0; k < checks.size(); ++k) {
    const output_check& c = checks[k];
    if (c.st == state::passed && failed_alone)
      ov.reason += fmt::format("; the {} test passes ({:.3g} of its bound): {}", c.name, c.m.max_error_over_bound,
                               made[k].on_pass);
    if (c.st != state::passed && ov.st == state::passed) ov.reason = c.reason;
    ov.st = worst_state(ov.st, c.st);
  }
  ov.checks = std::move(checks);
}

}  // namespace

namespace {

// Whether converting a value of type `from` to `to` may take a nonzero finite value to 0 or to
// an infinity (f32 inputs accumulated in f16).
bool narrows(dtype from, dtype to) {
  if (!is_float(from) || !is_float(to)) return false;
  return traits(to).min_subnormal > traits(from).min_subnormal || traits(to).max < traits(from).max;
}

}  // namespace

bool contract_changes_specials(const contract& c) {
  return c.rounds_inputs() || c.denorm == denormals::ftz || c.acc_round == rounding::rz ||
         c.dst_round == rounding::rz || narrows(c.src, c.acc) || narrows(c.wei, c.acc);
}

const std::vector<tensor>& contract_emulation::outputs() {
  if (!ran_) {
    outs_ = allocate(in_.p.spec().outputs(in_.p));
    const profiler_range range(phase::reference);  // sim as a yardstick, not the kernel under test
    run_backend(*make_sim_backend(), in_.p, in_.ins, outs_);
    ran_ = true;
  }
  return outs_;
}

std::string format_index(const dims& index) { return fmt::format("[{}]", fmt::join(index, ",")); }

std::vector<tensor> reference_tensors(const std::vector<operand>& outputs) {
  std::vector<tensor> out;
  out.reserve(outputs.size());
  for (const operand& o : outputs) out.emplace_back(dtype::f64, o.shape);
  return out;
}

state worst_state(state a, state b) {
  auto rank = [](state s) {
    switch (s) {
      case state::crash:
      case state::timeout: return 5;
      case state::mistrusted: return 4;
      case state::failed: return 3;
      case state::unimplemented: return 2;
      case state::skipped: return 1;
      case state::passed: return 0;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

bool alternative_outputs(const problem& p, std::span<const tensor> ins, const run_options& o, reference_values& alt,
                         case_result& r) {
  if (!o.reference) return true;
  try {
    alt = timed(phase::reference, r.times.reference, [&] { return reference_outputs(*o.reference, p, ins); });
    return true;
  } catch (const std::exception& e) {
    r.v.st = state::skipped;
    r.v.reason = fmt::format("no verdict: the reference {} failed on this problem: {}", r.reference, e.what());
    return false;
  }
}

std::vector<judgement> judge_outputs(const judging_input& in, const run_options& o, case_result& r) {
  const problem& p = in.p;
  const std::vector<operand> out_ops = p.spec().outputs(p);
  const std::vector<tensor>& expected = in.alt ? in.alt->outputs : in.refs;  // what the outputs are judged against
  std::vector<std::string> agreement;  // the alternative against the own reference, per output
  bool references_disagree = false;
  r.v.policy = o.pol.to_string();
  contract_emulation sim(in);
  const std::unique_ptr<tolerance_policy> tolerance = make_tolerance_policy(o.pol, in, r, sim);
  std::vector<judgement> js;
  std::vector<posterior_check> posterior = posterior_checks(in, o, r);
  for (std::size_t i = 0; i < in.outs.size(); ++i) {
    judgement& j = js.emplace_back(tolerance->of(i, out_ops[i].name));
    if (in.alt) {
      reference_agreement a = compare_references(out_ops[i].name, in.alt->outputs[i], in.refs[i],
                                                 j.total.empty() ? nullptr : &j.total, p.dt.dst);
      agreement.push_back(a.text);
      references_disagree = references_disagree || !a.agrees;
      widen_for_reference(j, r.reference, *in.alt, *tolerance);
    }
    output_verdict ov;
    ov.name = out_ops[i].name;
    const bool flushes = p.dt.denorm == denormals::ftz && is_float(p.dt.dst);
    compare_input ci{&in.outs[i], &expected[i], j.total.empty() ? nullptr : &j.total,
                     j.compute.empty() ? nullptr : &j.compute, p.dt.dst, o.worst_k, o.pol.bias_z,
                     o.pol.bias_min_ulps, j.bias_skip.empty(), j.bias_skip, flushes ? traits(p.dt.dst).min_normal : 0};
    ov.m = timed(phase::compare, r.times.compare, [&] { return compare_outputs(ci); });
    if (needs_contract_values(p, ov.m)) {
      ci.contract_values = &sim.outputs()[i];
      ov.m = timed(phase::compare, r.times.compare, [&] { return compare_outputs(ci); });
    }
    if (in.place) relocate(ov.m, i, in.place);
    ov.bound = j.bound_text;
    decide(ov);
    // A failing output's heatmap (the HTML report's): where in it the errors lie.
    if (ov.st == state::failed && !in.place) ov.m.tiles = timed(phase::compare, r.times.compare, [&] { return tile_errors(ci); });
    if (ci.contract_values) explain_contract_values(ov, *ci.contract_values);
    std::vector<output_check> checks;
    std::vector<posterior_check> made;
    for (posterior_check& pc : posterior)
      if (pc.output == i) {
        checks.push_back(judge_check(pc, ov, o, p.dt.dst, r));
        made.push_back(std::move(pc));
      }
    add_checks(ov, std::move(checks), made);
    r.v.st = worst_state(r.v.st, ov.st);
    if (r.v.reason.empty() && ov.st != state::passed) r.v.reason = ov.reason;
    r.v.outputs.push_back(std::move(ov));
  }
  if (in.alt) explain_reference(r, agreement, references_disagree);
  if (in.observe_precision && o.pol.kind == policy_kind::bound && (r.v.st == state::failed || p.dt.rounds_inputs()))
    if (auto seen = observe_precision(p, in.ft, bound_options{o.pol.false_alarm, o.pol.random_data}, in.ins, in.refs, in.outs)) {
      r.observed_contract = seen->contract;
      r.observed_note = seen->note;
    }
  if (in.observe_precision && r.v.st == state::failed && !in.alt) explain_by_hypothesis(in, js, r);
  return js;
}

}  // namespace opval::detail
