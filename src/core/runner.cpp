#include "opval/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include "core/memory_checks.hpp"
#include "core/output_judging.hpp"
#include "core/timed.hpp"
#include "core/valgrind_client.hpp"
#include "opval/guarded_allocator.hpp"
#include "opval/error.hpp"
#include "opval/log.hpp"
#include "opval/error_model.hpp"
#include "opval/op_spec.hpp"
#include "opval/threading.hpp"

namespace opval {
namespace {

using detail::format_index;
using detail::judgement;
using detail::judging_input;
using detail::seconds_since;
using detail::steady;
using detail::timed;
using detail::worst_state;

std::vector<tensor> allocate_f64(const std::vector<operand>& operands) {
  std::vector<tensor> out;
  out.reserve(operands.size());
  for (const auto& o : operands) out.emplace_back(dtype::f64, o.shape);
  return out;
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


// Runs the kernel `runs` more times (opval/heap_stats.hpp); a kernel whose every run grows
// the live heap leaks, and fails whatever its numbers.
void check_leaks_into(const problem& p, backend& b, int runs, std::span<const tensor> ins, std::span<tensor> outs,
                      case_result& r) {
  r.memory.leak = check_leaks(b, p, ins, outs, runs);
  if (!r.memory.leak.leaks) return;
  r.v.reason = r.v.st == state::passed ? r.memory.leak.finding : r.v.reason + "; it also " + r.memory.leak.finding;
  r.v.st = worst_state(r.v.st, state::failed);
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
  if (!detail::alternative_outputs(p, ins, o, alt, r)) return;
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
  const judging_input judged{.p = p, .ft = ft, .ins = ins, .refs = refs, .alt = o.reference ? &alt : nullptr,
                             .outs = outs, .observe_precision = b.name() != "sim"};
  const std::vector<judgement> js = judge_outputs(judged, o, r);
  // A memory finding names the cause; the comparison's own reason, if any, follows it.
  if (std::string memory = kc.findings(); !memory.empty()) {
    fail_with_cause(r, memory, "; comparison: ");
  }
  if (r.v.st == state::passed && o.perturb_check) {
    std::string finding = perturbation_finding(p, b, o.seed, kc, ins, outs, refs, js);
    if (!finding.empty()) r.v.st = state::mistrusted, r.v.reason = finding;
  }
  if (o.leak_check > 0) check_leaks_into(p, b, o.leak_check, ins, outs, r);
}

}  // namespace

case_result run_case(const problem& p, backend& b, const run_options& o, const std::string& source,
                     const backend_ref& made_from) {
  auto start = steady::now();
  case_result r;
  static_cast<case_identity&>(r) = identify(p, b.name(), o, source, made_from);
  r.backend_version = b.version();
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
    r.under = "valgrind";
  }
  r.repro = render_repro(r);
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
