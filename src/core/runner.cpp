#include "opval/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include "core/memory_checks.hpp"
#include "core/observed_precision.hpp"
#include "core/shell_quote.hpp"
#include "core/valgrind_client.hpp"
#include "opval/guarded_allocator.hpp"
#include "opval/error.hpp"
#include "opval/log.hpp"
#include "opval/error_model.hpp"
#include "opval/op_spec.hpp"
#include "opval/threading.hpp"

namespace opval {
namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point start) {
  return std::chrono::duration<double>(steady::now() - start).count();
}

// Times one stage into `slot`.
template <class F>
auto timed(double& slot, F&& f) {
  auto start = steady::now();
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    slot += seconds_since(start);
  } else {
    auto r = f();
    slot += seconds_since(start);
    return r;
  }
}

std::vector<tensor> allocate_f64(const std::vector<operand>& operands) {
  std::vector<tensor> out;
  out.reserve(operands.size());
  for (const auto& o : operands) out.emplace_back(dtype::f64, o.shape);
  return out;
}

std::string format_index(const dims& index) {
  return fmt::format("[{}]", fmt::join(index, ","));
}

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

// How one output is judged: its total bound (null for none), the non-rounding part for the
// bias test, the policy text and the bound's description.
struct judgement {
  tensor total;
  const tensor* compute = nullptr;
  std::string bias_skip;  ///< non-empty: the bias test does not apply, and why
  std::string policy_text;
  std::string bound_text;
};

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
  j.compute = &eb.compute;
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

// The tensors handed to the kernel under test and the memory checks around each of its runs
// (docs/SAFETY.md): guarded storage whose canaries are checked after each run, poisoned
// outputs, input hashes. Findings are one-line texts, each kept once.
class kernel_checks {
 public:
  kernel_checks(const problem& p, const run_options& o)
      : p_(p), o_(o), alloc_(o.guard ? shared_guarded_allocator(o.guard_at) : host_allocator()) {}

  /// Input tensors for the kernel (guarded and labelled when guards are on).
  std::vector<tensor> inputs(const std::vector<operand>& ops) { return make(ops, "input"); }
  /// Output tensors for the kernel, poisoned with pass `pass`'s pattern when poisoning is on.
  std::vector<tensor> outputs(const std::vector<operand>& ops, int pass) {
    std::vector<tensor> outs = make(ops, "output");
    if (o_.poison_check)
      for (auto& t : outs) detail::poison(t, pass);
    return outs;
  }
  /// Hashes the filled inputs: every later run must leave them bitwise unchanged.
  void remember_inputs(const std::vector<tensor>& ins, const std::vector<operand>& ops) {
    if (!o_.input_check) return;
    for (std::size_t i = 0; i < ins.size(); ++i) watched_.push_back({ins[i], ops[i].name, detail::storage_hash(ins[i])});
  }
  /// Runs the kernel, then checks the canaries of every tensor it got and the inputs' hashes.
  execution_info run(backend& b, std::span<const tensor> ins, std::span<tensor> outs,
                     backend_run_times* times = nullptr) {
    execution_info info = run_backend(b, p_, ins, outs, times);
    if (o_.guard) {
      for (const auto& t : ins) check_canaries(t);
      for (const auto& t : outs) check_canaries(t);
    }
    for (auto& w : watched_) check_input(w);
    return info;
  }
  /// Judges two runs of the kernel over outputs poisoned with pass 0 and pass 1: elements
  /// holding their poison in both were never written; the rest must match bitwise.
  void compare_passes(const std::vector<operand>& ops, const std::vector<tensor>& pass0,
                      const std::vector<tensor>& pass1) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (detail::same_storage(pass0[i], pass1[i])) continue;
      detail::element_finding nw = detail::never_written(pass0[i], pass1[i]);
      if (nw.count)
        add(fmt::format("output '{}': {} of {} elements never written (first at {})", ops[i].name, nw.count,
                        pass0[i].numel(), format_index(pass0[i].unravel(nw.first))));
      if (must_repeat())
        if (auto d = detail::bitwise_differences(pass0[i], 0, pass1[i], 1); d.count)
          add(fmt::format("nondeterministic: output '{}' differs bitwise between two runs on the same inputs in "
                          "{} of {} elements, first at {}", ops[i].name, d.count, pass0[i].numel(),
                          detail::describe_first(pass0[i], d)));
    }
  }
  /// Re-runs the kernel with each of `threads` OpenMP threads; outputs must match `first`'s
  /// (computed with the default thread count) bitwise.
  void compare_thread_counts(backend& b, std::span<const tensor> ins, const std::vector<operand>& ops,
                             const std::vector<tensor>& first) {
    if (!must_repeat()) return;
    const int default_threads = omp_get_max_threads();
    for (int n : o_.threads) {
      std::vector<tensor> outs = outputs(ops, 0);
      {
        omp_threads_scope scope(n);
        run(b, ins, outs);
      }
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (detail::same_storage(first[i], outs[i])) continue;
        if (auto d = detail::bitwise_differences(first[i], 0, outs[i], 0); d.count)
          add(fmt::format("nondeterministic across thread counts: output '{}' with {} threads differs bitwise from "
                          "the run with {} in {} of {} elements, first at {}", ops[i].name, n, default_threads,
                          d.count, first[i].numel(), detail::describe_first(first[i], d)));
      }
    }
  }
  /// The findings so far, "; "-separated ("" when none).
  std::string findings() const { return fmt::format("{}", fmt::join(findings_, "; ")); }

 private:
  struct watched_input {
    tensor t;  // shares the kernel's storage
    std::string name;
    std::uint64_t hash;
  };

  std::vector<tensor> make(const std::vector<operand>& ops, const char* role) {
    std::vector<tensor> ts = allocate(ops, alloc_);
    if (o_.guard)
      for (std::size_t i = 0; i < ts.size(); ++i)
        label_guarded_region(ts[i].data(), ops[i].name, fmt::format("{} {}", role, i));
    return ts;
  }
  // Repeats must match bitwise unless the contract allows otherwise or an input was written
  // (the runs then had different inputs).
  bool must_repeat() const { return p_.dt.deterministic && !input_written_; }
  void add(std::string finding) {
    if (std::find(findings_.begin(), findings_.end(), finding) == findings_.end()) findings_.push_back(std::move(finding));
  }
  void check_canaries(const tensor& t) {
    if (auto damage = check_guard_canaries(t.data())) add(*damage);
  }
  // The old values cannot be read back after the fact; the fill is deterministic, so a fresh
  // fill from the same seed shows which elements changed.
  void check_input(watched_input& w) {
    const std::uint64_t now = detail::storage_hash(w.t);
    if (now == w.hash) return;
    w.hash = now;  // report each input once
    input_written_ = true;
    const op_spec& spec = p_.spec();
    std::vector<operand> ops = spec.inputs(p_);
    std::vector<tensor> fresh = allocate(ops);
    spec.fill(p_, o_.seed, fresh);
    const auto k = static_cast<std::size_t>(
        std::find_if(ops.begin(), ops.end(), [&](const operand& o) { return o.name == w.name; }) - ops.begin());
    if (k >= ops.size()) return add(fmt::format("kernel wrote input '{}'", w.name));
    detail::element_finding c = detail::changed_elements(w.t, fresh[k]);
    if (c.count == 0) return add(fmt::format("kernel wrote input '{}' outside its elements (padding bytes)", w.name));
    add(fmt::format("kernel wrote input '{}': {} of {} elements changed, first at {}", w.name, c.count, w.t.numel(),
                    detail::describe_first(w.t, c)));
  }

  const problem& p_;
  const run_options& o_;
  allocator& alloc_;
  std::vector<watched_input> watched_;
  std::vector<std::string> findings_;
  bool input_written_ = false;
};

// Re-runs the kernel with one input re-filled from another seed. An output that stays
// bitwise identical while the reference moves beyond the bounds ignores its input.
std::string perturbation_finding(const problem& p, backend& b, std::uint64_t seed, kernel_checks& kc,
                                 const std::vector<tensor>& ins, const std::vector<tensor>& outs,
                                 const std::vector<tensor>& refs, const std::vector<judgement>& js) {
  const op_spec& spec = p.spec();
  const int k = spec.perturbed_input(p);
  if (k < 0 || k >= static_cast<int>(ins.size())) return {};
  auto operands = spec.inputs(p);
  std::vector<tensor> fresh = kc.inputs(operands);
  const std::uint64_t other_seed = seed ^ 0x9e3779b97f4a7c15ull;
  spec.fill(p, other_seed, fresh);
  std::vector<tensor> mixed = ins;
  mixed[k] = fresh[k];
  std::vector<tensor> outs2 = kc.outputs(spec.outputs(p), 0);
  kc.run(b, mixed, outs2);
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (!outs[i].bitwise_equal(outs2[i])) return {};
  std::vector<tensor> refs2 = allocate_f64(spec.outputs(p));
  spec.reference(p, mixed, refs2);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const double* r1 = refs[i].data_as<double>();
    const double* r2 = refs2[i].data_as<double>();
    const double* bound = js[i].total.empty() ? nullptr : js[i].total.data_as<double>();
    for (std::int64_t e = 0, n = refs[i].numel(); e < n; ++e) {
      double slack = bound ? 2.0 * bound[e] : 0.0;
      if (std::fabs(r2[e] - r1[e]) > slack)
        return fmt::format("output is bitwise identical after input '{}' was re-filled (seed {}), "
                           "while the reference moved at {} from {:.9g} to {:.9g}",
                           operands[k].name, other_seed, format_index(refs[i].unravel(e)), r1[e], r2[e]);
    }
  }
  return {};
}

std::string repro_command(const problem& p, const run_options& o, const std::string& backend_name) {
  std::string cmd = fmt::format("opval repro {} --seed {} --backend {} --policy {}", detail::shell_quote(p.to_string()),
                                o.seed, backend_name, o.pol.to_string());
  if (o.reference && !o.reference->ref.empty())
    cmd += " --reference " + (o.reference->ref.plugin_path.empty() ? o.reference->ref.name
                                                                   : detail::shell_quote(o.reference->ref.plugin_path));
  return cmd;
}

// Runs the kernel `runs` more times (opval/heap_stats.hpp); a kernel whose every run grows
// the live heap leaks, and fails whatever its numbers.
void check_leaks_into(const problem& p, backend& b, int runs, std::span<const tensor> ins, std::span<tensor> outs,
                      case_result& r) {
  r.memory.leak = check_leaks(b, p, ins, outs, runs);
  if (!r.memory.leak.leaks) return;
  r.v.reason = r.v.st == state::passed ? r.memory.leak.finding : r.v.reason + "; it also " + r.memory.leak.finding;
  r.v.st = worst_state(r.v.st, state::failed);
  r.repro += fmt::format(" --leak-check {}", runs);
}

// Fails the case with `finding` first in its reason, whatever the comparison said: a memory
// finding names the cause. The reason the case had, if any, follows after `joiner`.
void fail_with_cause(case_result& r, const std::string& finding, std::string_view joiner) {
  r.v.reason = r.v.st == state::passed ? finding : fmt::format("{}{}{}", finding, joiner, r.v.reason);
  r.v.st = state::failed;
}

void evaluate(const problem& p, backend& b, const run_options& o, case_result& r) {
  const op_spec& spec = p.spec();
  auto in_ops = spec.inputs(p);
  auto out_ops = spec.outputs(p);
  kernel_checks kc(p, o);
  std::vector<tensor> ins = kc.inputs(in_ops);
  std::vector<tensor> outs = kc.outputs(out_ops, 0);
  fill_traits ft = timed(r.times.fill, [&] {
    std::span<tensor> s(ins);
    return spec.fill(p, o.seed, s);
  });
  // An alternative reference runs first, on the inputs as filled: one that fails leaves no
  // verdict to give, and the kernel need not run.
  reference_values alt;
  if (o.reference) {
    try {
      alt = timed(r.times.reference, [&] { return reference_outputs(*o.reference, p, ins); });
    } catch (const std::exception& e) {
      r.v.st = state::skipped;
      r.v.reason = fmt::format("no verdict: the reference {} failed on this problem: {}", r.reference, e.what());
      return;
    }
  }
  kc.remember_inputs(ins, in_ops);
  backend_run_times bt;
  r.exec = kc.run(b, ins, outs, &bt);
  if (o.poison_check) {  // the second pass over the other poison; only the kernel runs twice
    std::vector<tensor> outs1 = kc.outputs(out_ops, 1);
    kc.run(b, ins, outs1);
    kc.compare_passes(out_ops, outs, outs1);
  }
  kc.compare_thread_counts(b, ins, out_ops, outs);
  r.times.prepare = bt.prepare;
  r.times.execute = bt.kernel;
  if (bt.device_kernel) r.times.device_kernel = *bt.device_kernel;
  r.memory.run = bt.memory;
  std::vector<tensor> refs = allocate_f64(out_ops);
  timed(r.times.reference, [&] { spec.reference(p, ins, refs); });
  const std::vector<tensor>& expected = o.reference ? alt.outputs : refs;  // what the kernel is judged against
  std::vector<std::string> agreement;  // the alternative against the own reference, per output
  bool references_disagree = false;

  std::vector<judgement> js(outs.size());
  std::vector<error_bound> bounds;
  r.v.policy = o.pol.to_string();
  if (o.pol.kind == policy_kind::bound) {
    bound_options bo{o.pol.false_alarm};
    bounds = timed(r.times.bound, [&] { return spec.bound(p, ft, bo, ins, refs); });
    if (bounds.size() != outs.size())
      throw error(fmt::format("{} returned {} bounds for {} outputs", spec.name(), bounds.size(), outs.size()));
  }
  std::vector<tensor> sim_outs;  // computed once, if any output is judged relative to sim
  auto sim_error = [&](std::size_t i) {
    if (sim_outs.empty()) {
      sim_outs = allocate(out_ops);
      run_backend(*make_sim_backend(), p, ins, sim_outs);
    }
    compare_input ci{.got = &sim_outs[i], .expected = &refs[i], .ulp_type = p.dt.dst, .worst_k = 0, .bias_test = false,
                     .bias_skip_reason = "a yardstick, not a verdict"};
    return compare_outputs(ci).max_abs_error;
  };
  for (std::size_t i = 0; i < outs.size(); ++i) {
    judgement& j = js[i];
    const bool use_bound = o.pol.kind == policy_kind::bound && bounds[i].meaningful;
    if (use_bound) {
      j = judge_by_bound(bounds[i], refs[i], p.dt);
      j.bias_skip = bias_exemption(p.dt, ft);
    } else if (o.pol.kind == policy_kind::exact) {
      j = judge_by_constant("exact (bitwise)");
      j.total = map_reference(refs[i], [](std::int64_t, double) { return 0.0; });
    } else if (o.pol.kind == policy_kind::fixed) {
      j = judge_by_constant(fmt::format("fixed: atol {:g} + rtol {:g} * |ref|", o.pol.atol, o.pol.rtol));
      j.total = map_reference(refs[i], [&](std::int64_t, double x) { return o.pol.atol + o.pol.rtol * std::fabs(x); });
    } else {
      const double m = o.pol.kind == policy_kind::relative_to_sim ? o.pol.sim_factor : policy{}.sim_factor;
      const double floor_ = traits(p.dt.dst).unit_roundoff * max_abs_finite(refs[i]);
      const double sim_err = sim_error(i);
      const double threshold = m * std::max(sim_err, floor_);
      j = judge_by_constant(fmt::format("relative-to-sim: |err| <= {:g} * max(sim max err {:.3g}, "
                                                   "u_out*max|ref| {:.3g}) = {:.3g}", m, sim_err, floor_, threshold));
      j.total = map_reference(refs[i], [&](std::int64_t, double) { return threshold; });
      if (o.pol.kind == policy_kind::bound)
        r.v.policy += " (output '" + out_ops[i].name + "' judged relative-to-sim:m=" + fmt::format("{:g}", m) +
                      ": " + bounds[i].why_not + ")";
    }
    if (o.reference) {
      reference_agreement a =
          compare_references(out_ops[i].name, alt.outputs[i], refs[i], j.total.empty() ? nullptr : &j.total, p.dt.dst);
      agreement.push_back(a.text);
      references_disagree = references_disagree || !a.agrees;
      widen_for_reference(j, r.reference, alt, o.pol.kind);
    }
    output_verdict ov;
    ov.name = out_ops[i].name;
    compare_input ci{&outs[i], &expected[i], j.total.empty() ? nullptr : &j.total, j.compute, p.dt.dst, o.worst_k,
                     o.pol.bias_z, o.pol.bias_min_ulps, j.bias_skip.empty(), j.bias_skip};
    ov.m = timed(r.times.compare, [&] { return compare_outputs(ci); });
    decide(ov, j);
    r.v.st = worst_state(r.v.st, ov.st);
    if (r.v.reason.empty() && ov.st != state::passed) r.v.reason = ov.reason;
    r.v.outputs.push_back(std::move(ov));
  }
  if (o.reference) explain_reference(r, agreement, references_disagree);
  if (o.pol.kind == policy_kind::bound && b.name() != "sim" && (r.v.st == state::failed || p.dt.rounds_inputs()))
    if (auto seen = observe_precision(p, ft, bound_options{o.pol.false_alarm}, ins, refs, outs)) {
      r.observed_contract = seen->contract;
      r.observed_note = seen->note;
    }
  // A memory finding names the cause; the comparison's own reason, if any, follows it.
  if (std::string memory = kc.findings(); !memory.empty()) {
    fail_with_cause(r, memory, "; comparison: ");
    if (o.guard && o.guard_at == guard_side::before) r.repro += " --guard-before";
    if (!o.threads.empty()) r.repro += fmt::format(" --threads {}", fmt::join(o.threads, ","));
  }
  if (r.v.st == state::passed && o.perturb_check) {
    std::string finding = perturbation_finding(p, b, o.seed, kc, ins, outs, refs, js);
    if (!finding.empty()) r.v.st = state::mistrusted, r.v.reason = finding;
  }
  if (o.leak_check > 0) check_leaks_into(p, b, o.leak_check, ins, outs, r);
}

}  // namespace

case_result run_case(const problem& p, backend& b, const run_options& o, const std::string& source) {
  auto start = steady::now();
  case_result r;
  r.descriptor = p.to_string();
  r.op = std::string(p.op());
  r.contract = p.dt.types_string();
  r.seed = o.seed;
  r.backend = b.name();
  r.backend_version = b.version();
  r.source = source;
  if (o.reference) r.reference = o.reference->name();
  r.repro = repro_command(p, o, b.name());
  const unsigned valgrind_errors = detail::valgrind_error_count();
  try {
    support s = b.supports(p);
    if (s.ok && o.reference) s = reference_support(*o.reference, p);
    if (!s.ok) {
      r.v.st = s.st;
      r.v.reason = s.reason;
    } else {
      evaluate(p, b, o, r);
    }
  } catch (const std::exception& e) {
    r.v.st = state::failed;
    r.v.reason = std::string("error while running the case: ") + e.what();
  }
  if (const unsigned found = detail::valgrind_error_count() - valgrind_errors; found > 0) {
    const std::string finding =
        fmt::format("valgrind memcheck reported {} error{} during the case (its report is on stderr, above this "
                    "case's line)", found, found == 1 ? "" : "s");
    fail_with_cause(r, finding, "; ");
    r.repro += " --under valgrind";
  }
  r.times.total = seconds_since(start);
  if (log_enabled(log_level::debug))
    log(log_level::debug, fmt::format("{} on {}: {} in {:.3g} s", r.descriptor, r.backend, to_string(r.v.st), r.times.total));
  return r;
}

std::vector<located_problem> suite_problems(const std::string& tag, const std::vector<std::string>& op_filter) {
  std::vector<located_problem> out;
  for (const op_spec* spec : all_ops()) {
    if (!op_filter.empty() && std::find(op_filter.begin(), op_filter.end(), spec->name()) == op_filter.end())
      continue;
    int index = 0;
    for (const auto& line : spec->suite(tag)) {
      ++index;
      try {
        out.push_back({parse_problem(line), fmt::format("{} suite {} #{}", spec->name(), tag, index)});
      } catch (const error& e) {
        throw error(fmt::format("{} suite {} #{} ('{}'): {}", spec->name(), tag, index, line, e.what()));
      }
    }
  }
  for (const auto& name : op_filter) find_op(name);  // unknown names are bad input
  return out;
}

}  // namespace opval
