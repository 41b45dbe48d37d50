#include "core/output_judging.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/observed_precision.hpp"
#include "core/timed.hpp"
#include "opval/error.hpp"
#include "opval/error_model.hpp"

namespace opval::detail {
namespace {

// A per-element tensor from a function of the reference value.
template <class F>
tensor map_reference(const tensor& ref, F&& f) {
  tensor out(dtype::f64, ref.shape());
  const double* r = ref.data_as<double>();
  double* o = out.data_as<double>();
  const std::int64_t n = ref.numel();
#pragma omp parallel for schedule(static) if (n > 32768)
  for (std::int64_t i = 0; i < n; ++i) o[i] = f(i, r[i]);
  return out;
}

double max_abs_finite(const tensor& ref) {
  const double* r = ref.data_as<double>();
  double m = 0;
  for (std::int64_t i = 0, n = ref.numel(); i < n; ++i)
    if (std::isfinite(r[i])) m = std::max(m, std::fabs(r[i]));
  return m;
}

// Why the rounding-bias test does not apply to an output judged by its bound ("" if it does).
std::string bias_exemption(const contract& c, const fill_traits& f) {
  if (!is_float(c.dst)) return "integer outputs lie on a grid as coarse as their ULP";
  if (c.dst_round != rounding::rne) return "the contract promises directed output rounding";
  if (f.repeated_values) return "the fill repeats values, so rounding errors are not independent";
  return {};
}

judgement judge_by_bound(const error_bound& eb, const tensor& ref, const contract& c) {
  judgement j;
  const double* comp = eb.compute.data_as<double>();
  j.total = map_reference(ref, [&](std::int64_t i, double r) {
    return comp[i] + output_rounding_bound(c.dst, c.dst_round, c.denorm, r);
  });
  j.compute = eb.compute;
  j.bound_text = eb.formula + " + output rounding to " + std::string(to_string(c.dst)) +
                 (c.dst_round == rounding::rz ? " (rz)" : "");
  return j;
}

judgement judge_by_constant(std::string text) {
  judgement j;
  j.bound_text = std::move(text);
  j.bias_skip = "the policy has no per-element error model to tell rounding-dominated elements";
  return j;
}

// Against an alternative reference with the contract's rounding, whose own error adds to the
// kernel's, the bound doubles (|kernel - alt| <= |kernel - exact| + |alt - exact|) and the
// rounding-bias test, which needs exact values, does not apply. A policy with its own
// tolerance (exact, fixed) is taken as the user's tolerance against that reference.
void widen_for_reference(judgement& j, const std::string& name, const reference_values& ref, policy_kind kind) {
  if (!ref.rounded || kind == policy_kind::exact || kind == policy_kind::fixed) return;
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

// What was decided about one output from its metrics.
void decide(output_verdict& ov, const judgement& j) {
  const metrics& m = ov.m;
  ov.bound = j.bound_text;
  auto worst_text = [&] {
    if (m.worst.empty()) return std::string();
    const auto& w = m.worst.front();
    return fmt::format("worst at {}: expected {:.9g}, got {:.9g}, |err| {:.3g} ({:.3g} ULP) vs bound {:.3g}",
                       format_index(w.index), w.expected, w.got, w.abs_error, w.ulps, w.bound);
  };
  if (m.got_all_zero && m.ref_significant > 0) {
    ov.st = state::mistrusted;
    ov.reason = fmt::format("output '{}' is all zeros where {} reference elements exceed their bound",
                            ov.name, m.ref_significant);
  } else if (m.got_constant && !m.ref_constant) {
    ov.st = state::mistrusted;
    ov.reason = fmt::format("output '{}' is constant ({:.9g}) where the reference is not", ov.name,
                            m.worst.empty() ? 0.0 : m.worst.front().got);
  } else if (m.nan_mismatch || m.inf_mismatch || m.beyond_bound) {
    ov.st = state::failed;
    ov.reason = fmt::format("output '{}': {} of {} elements beyond the bound", ov.name, m.beyond_bound, m.count);
    if (m.nan_mismatch) ov.reason += fmt::format(", {} NaN mismatches", m.nan_mismatch);
    if (m.inf_mismatch) ov.reason += fmt::format(", {} Inf mismatches", m.inf_mismatch);
    ov.reason += "; " + worst_text() + " (" + j.bound_text + ")";
  } else if (m.bias.biased) {
    ov.st = state::failed;
    ov.reason = fmt::format("output '{}': systematic rounding bias: {}{}", ov.name, m.bias.note,
                            m.bias.sign_relative_mean < 0 && std::fabs(m.bias.sign_relative_mean) >
                                std::fabs(m.bias.plain_mean) - 1e-12
                                ? " (truncation toward zero where round-to-nearest was promised?)"
                                : " (directed rounding where round-to-nearest was promised?)");
  } else {
    ov.st = state::passed;
  }
}

// The tolerance of output i under the policy: its error bound, exact, fixed, or relative to
// sim (the policy's own, or the fallback where the bound means nothing).
class tolerances {
 public:
  tolerances(const judging_input& in, const run_options& o, case_result& r) : in_(in), o_(o), r_(r) {
    if (o.pol.kind != policy_kind::bound) return;
    bound_options bo{o.pol.false_alarm};
    const op_spec& spec = in.p.spec();
    bounds_ = timed(r.times.bound, [&] { return spec.bound(in.p, in.ft, bo, in.ins, in.refs); });
    if (bounds_.size() != in.outs.size())
      throw error(fmt::format("{} returned {} bounds for {} outputs", spec.name(), bounds_.size(), in.outs.size()));
  }

  judgement of(std::size_t i, const std::string& output) {
    const policy& pol = o_.pol;
    const tensor& ref = in_.refs[i];
    if (pol.kind == policy_kind::bound && bounds_[i].meaningful) {
      judgement j = judge_by_bound(bounds_[i], ref, in_.p.dt);
      j.bias_skip = bias_exemption(in_.p.dt, in_.ft);
      return j;
    }
    if (pol.kind == policy_kind::exact) {
      judgement j = judge_by_constant("exact (bitwise)");
      j.total = map_reference(ref, [](std::int64_t, double) { return 0.0; });
      return j;
    }
    if (pol.kind == policy_kind::fixed) {
      judgement j = judge_by_constant(fmt::format("fixed: atol {:g} + rtol {:g} * |ref|", pol.atol, pol.rtol));
      j.total = map_reference(ref, [&](std::int64_t, double x) { return pol.atol + pol.rtol * std::fabs(x); });
      return j;
    }
    const double m = pol.kind == policy_kind::relative_to_sim ? pol.sim_factor : policy{}.sim_factor;
    const double floor_ = traits(in_.p.dt.dst).unit_roundoff * max_abs_finite(ref);
    const double sim_err = sim_error(i);
    const double threshold = m * std::max(sim_err, floor_);
    judgement j = judge_by_constant(fmt::format("relative-to-sim: |err| <= {:g} * max(sim max err {:.3g}, "
                                                "u_out*max|ref| {:.3g}) = {:.3g}", m, sim_err, floor_, threshold));
    j.total = map_reference(ref, [&](std::int64_t, double) { return threshold; });
    if (pol.kind == policy_kind::bound)
      r_.v.policy_note += fmt::format("{}output '{}' judged relative-to-sim:m={:g}: {}",
                                      r_.v.policy_note.empty() ? "" : "; ", output, m, bounds_[i].why_not);
    return j;
  }

 private:
  // sim's largest error on output i, as the yardstick of relative-to-sim; sim runs once.
  double sim_error(std::size_t i) {
    if (sim_outs_.empty()) {
      sim_outs_ = allocate(in_.p.spec().outputs(in_.p));
      run_backend(*make_sim_backend(), in_.p, in_.ins, sim_outs_);
    }
    compare_input ci{.got = &sim_outs_[i], .expected = &in_.refs[i], .ulp_type = in_.p.dt.dst, .worst_k = 0,
                     .bias_test = false, .bias_skip_reason = "a yardstick, not a verdict"};
    return compare_outputs(ci).max_abs_error;
  }

  const judging_input& in_;
  const run_options& o_;
  case_result& r_;
  std::vector<error_bound> bounds_;
  std::vector<tensor> sim_outs_;
};

}  // namespace

std::string format_index(const dims& index) { return fmt::format("[{}]", fmt::join(index, ",")); }

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
    alt = timed(r.times.reference, [&] { return reference_outputs(*o.reference, p, ins); });
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
  tolerances tol(in, o, r);
  std::vector<judgement> js;
  for (std::size_t i = 0; i < in.outs.size(); ++i) {
    judgement& j = js.emplace_back(tol.of(i, out_ops[i].name));
    if (in.alt) {
      reference_agreement a = compare_references(out_ops[i].name, in.alt->outputs[i], in.refs[i],
                                                 j.total.empty() ? nullptr : &j.total, p.dt.dst);
      agreement.push_back(a.text);
      references_disagree = references_disagree || !a.agrees;
      widen_for_reference(j, r.reference, *in.alt, o.pol.kind);
    }
    output_verdict ov;
    ov.name = out_ops[i].name;
    compare_input ci{&in.outs[i], &expected[i], j.total.empty() ? nullptr : &j.total,
                     j.compute.empty() ? nullptr : &j.compute, p.dt.dst, o.worst_k, o.pol.bias_z,
                     o.pol.bias_min_ulps, j.bias_skip.empty(), j.bias_skip};
    ov.m = timed(r.times.compare, [&] { return compare_outputs(ci); });
    decide(ov, j);
    r.v.st = worst_state(r.v.st, ov.st);
    if (r.v.reason.empty() && ov.st != state::passed) r.v.reason = ov.reason;
    r.v.outputs.push_back(std::move(ov));
  }
  if (in.alt) explain_reference(r, agreement, references_disagree);
  if (in.observe_precision && o.pol.kind == policy_kind::bound && (r.v.st == state::failed || p.dt.rounds_inputs()))
    if (auto seen = observe_precision(p, in.ft, bound_options{o.pol.false_alarm}, in.ins, in.refs, in.outs)) {
      r.observed_contract = seen->contract;
      r.observed_note = seen->note;
    }
  return js;
}

}  // namespace opval::detail
