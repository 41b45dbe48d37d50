#include "opval/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include "core/backend_run.hpp"
#include "core/case_budget.hpp"
#include "core/memory_checks.hpp"
#include "core/output_judging.hpp"
#include "core/perturbation.hpp"
#include "core/sampled_verification.hpp"
#include "core/timed.hpp"
#include "core/valgrind_client.hpp"
#include "core/guarded_allocator.hpp"
#include "opval/error.hpp"
#include "opval/log.hpp"
#include "core/error_model.hpp"
#include "opval/op_spec.hpp"
#include "core/threading.hpp"

namespace opval {
namespace {

using detail::format_index;
using detail::judgement;
using detail::judging_input;
using detail::phase;
using detail::profiler_range;
using detail::seconds_since;
using detail::steady;
using detail::timed;
using detail::worst_state;

// Fails the case with `finding` first in its reason, whatever the comparison said: a memory
// finding names the cause. The reason the case had, if any, follows after `joiner`.
void fail_with_cause(case_result& r, const std::string& finding, std::string_view joiner) {
  r.v.reason = r.v.st == state::passed ? finding : fmt::format("{}{}{}", finding, joiner, r.v.reason);
  r.v.st = state::failed;
}

// A kernel that declines the problem (backend.hpp's `declined`) leaves the case SKIPPED with its
// reason: no output is judged, and the poison, repeat and thread-count comparisons that lack a
// run say nothing. Only the checks' findings so far outweigh it (memory damage, the declining
// run's included; what two complete runs showed): they FAIL the case, since a kernel that
// writes out of bounds is wrong whether or not it then declines.
void decline_case(case_result& r, const detail::kernel_checks& kc, const declined& d, bool after_a_run) {
  const std::string reason = after_a_run ? fmt::format("declined the problem on a rerun: {}", d.what()) : d.what();
  if (const std::string memory = kc.findings(); !memory.empty()) {
    r.v.st = state::failed;
    r.v.reason = fmt::format("{}; the kernel then declined the problem: {}", memory, reason);
    return;
  }
  r.v.st = state::skipped;
  r.v.reason = reason.empty() ? "the kernel declined the problem without a reason" : reason;
}

// The kernel's runs on the filled inputs, each under the memory checks: the first (timed, into
// `outs`), a second over the other poison (never-written elements, determinism) unless `one_run`
// (sampled verification: the first run's poison alone shows never-written elements), one per
// extra thread count. False when the kernel declined the problem (decline_case).
bool run_kernel(backend& b, detail::kernel_checks& kc, const std::vector<tensor>& ins,
                const std::vector<operand>& out_ops, std::vector<tensor>& outs, const run_options& o, bool one_run,
                case_result& r) {
  backend_run_times bt;
  bool ran = false;
  try {
    r.exec = kc.run(b, ins, outs, &bt);
    ran = true;
    if (one_run) {
      kc.check_one_pass(out_ops, outs);
    } else if (o.poison_check) {
      std::vector<tensor> outs1 = kc.outputs(out_ops, 1);
      kc.run(b, ins, outs1);
      kc.compare_passes(b, ins, out_ops, outs, outs1);
    }
    kc.compare_thread_counts(b, ins, out_ops, outs);
    b.release_threads();
  } catch (const declined& d) {
    decline_case(r, kc, d, ran);
    return false;
  }
  r.times.prepare = bt.prepare;
  r.times.execute = bt.kernel;
  if (bt.device_kernel) r.times.device_kernel = *bt.device_kernel;
  r.memory.run = bt.memory;
  return true;
}

// A case's stages, in order. An alternative reference runs before the kernel, on the inputs as
// filled: one that fails leaves no verdict to give, and the kernel need not run.
void evaluate(const problem& p, backend& b, const run_options& o, case_result& r) {
  const op_spec& spec = p.spec();
  const std::vector<operand> in_ops = spec.inputs(p), out_ops = spec.outputs(p);
  detail::kernel_checks kc(p, o);
  std::vector<tensor> ins = kc.inputs(in_ops), outs = kc.outputs(out_ops, 0);
  b.release_threads();  // a pool started with its library (OpenBLAS's) polls through the fill
  const fill_traits ft = timed(phase::fill, r.times.fill, [&] { return spec.fill(p, o.seed, std::span<tensor>(ins)); });
  reference_values alt;
  if (!detail::alternative_outputs(p, ins, o, alt, r)) return;
  kc.remember_inputs(ins, in_ops);
  const std::optional<output_sample> sample = detail::draw_sample(p, ins, o, r);
  if (!run_kernel(b, kc, ins, out_ops, outs, o, sample.has_value(), r)) return;
  std::vector<tensor> refs;
  std::vector<judgement> js;
  if (sample) {
    detail::judge_by_sample(p, ft, ins, *sample, outs, o, r);
  } else {
    refs = detail::reference_tensors(out_ops);
    timed(phase::reference, r.times.reference, [&] { spec.reference(p, ins, refs); });
    const judging_input judged{.p = p, .ft = ft, .ins = ins, .refs = refs, .alt = o.reference ? &alt : nullptr,
                               .outs = outs, .observe_precision = b.name() != "sim"};
    js = judge_outputs(judged, o, r);
  }
  // A memory finding names the cause; the comparison's own reason, if any, follows it.
  if (const std::string memory = kc.findings(); !memory.empty()) fail_with_cause(r, memory, "; comparison: ");
  if (!sample && r.v.st == state::passed && o.perturb_check)
    if (std::string finding = detail::perturbation_finding(p, b, o.seed, kc, ins, outs, refs, js); !finding.empty())
      r.v.st = state::mistrusted, r.v.reason = std::move(finding);
  if (o.leak_check > 0) detail::check_leaks_into(p, b, o.leak_check, ins, outs, r);
}

}  // namespace

case_result run_case(const problem& p, backend& b, const run_options& o, const std::string& source,
                     const backend_ref& made_from) {
  auto start = steady::now();
  case_result r;
  static_cast<case_identity&>(r) = identify(p, b.name(), o, source, made_from);
  const profiler_range case_range(r.descriptor);
  r.backend_version = b.version();
  const unsigned valgrind_errors = detail::valgrind_error_count();
  try {
    support s = b.supports(p);
    if (s.ok && o.reference) s = reference_support(*o.reference, p);
    // Before anything of the case is allocated: a problem too big for the machine is skipped.
    if (const std::optional<std::string> too_big = s.ok ? detail::over_memory_budget(p, o) : std::nullopt)
      s = support::skipped(*too_big);
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

}  // namespace opval
