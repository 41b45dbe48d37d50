// The console reporter: one table row per case, every case that did not pass explained
// under its row (reason, bound, worst elements) with the command that reproduces it, the time
// split over the stages of the cases that ran, and a closing line `N passed, N failed,
// N skipped` that scripts can grep.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "opval/reporter.hpp"
#include "core/heap_stats.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

constexpr std::string_view row_format = "{:<12} {:<44} {:<16} {:<13} {:>9} {:>9} {:>9}\n";


std::string compact(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", x);
}

std::string duration(double seconds) {
  if (seconds < 1) return fmt::format("{:.1f}ms", seconds * 1e3);
  return fmt::format("{:.2f}s", seconds);
}

/// Stage times summed over the cases that ran, so a run shows where its time went (the next
/// bottleneck): `other` is what no stage accounts for (capability query, allocation, the
/// perturbation re-run, the observed-precision search, the verdict).
struct time_split {
  int cases = 0;
  double fill = 0, prepare = 0, kernel = 0, reference = 0, bound = 0, compare = 0, total = 0;

  void add(const case_timings& t) {
    ++cases;
    fill += t.fill, prepare += t.prepare, kernel += t.execute, reference += t.reference;
    bound += t.bound, compare += t.compare, total += t.total;
  }

  /// `time split over N cases: fill 0.12s (3%), prepare ...`; empty when no case ran.
  std::string line() const {
    if (cases == 0) return {};
    const double other = std::max(0.0, total - fill - prepare - kernel - reference - bound - compare);
    std::string text = fmt::format("time split over {} case{}:", cases, cases == 1 ? "" : "s");
    const std::pair<const char*, double> stages[] = {{"fill", fill},           {"prepare", prepare},
                                                     {"kernel", kernel},       {"reference", reference},
                                                     {"bound", bound},         {"compare", compare},
                                                     {"other", other}};
    for (std::size_t i = 0; i < std::size(stages); ++i)
      text += fmt::format("{} {} {} ({:.0f}%)", i == 0 ? "" : ",", stages[i].first, duration(stages[i].second),
                          total > 0 ? 100 * stages[i].second / total : 0.0);
    return text;
  }
};

/// "peak 1.2 KiB, total 3.4 KiB in 5 allocations" for one measured section.
std::string heap_text(const heap_stats& h) {
  return fmt::format("peak {}, total {} in {} allocation{}, net {}", format_bytes(h.peak_bytes),
                     format_bytes(h.total_bytes), h.allocations, h.allocations == 1 ? "" : "s",
                     format_bytes(h.net_bytes));
}

/// The memory line of a case's explanation: the kernel's heap use, the set-up's, the RSS
/// change and the leak check.
std::string memory_text(const case_memory& m) {
  std::string text = m.run.kernel.measured ? "kernel heap " + heap_text(m.run.kernel) + "; prepare heap " +
                                                 heap_text(m.run.prepare)
                                           : "heap not measured (" + heap_hooks_unavailable_reason() + ")";
  if (m.run.kernel_rss_delta) text += "; kernel RSS change " + format_bytes(*m.run.kernel_rss_delta);
  if (m.leak.runs > 0 && !m.leak.leaks) text += fmt::format("; no leak over {} more runs", m.leak.runs);
  else if (!m.leak.leaks && !m.leak.finding.empty()) text += "; leak check " + m.leak.finding;
  return text;
}

/// Kernel heap use over the cases that ran, for the closing lines: the largest peak and RSS
/// growth, the total allocated, and the cases found leaking.
struct memory_summary {
  int cases = 0, leaking = 0;
  std::int64_t peak = 0, total = 0, allocations = 0, rss = 0;

  void add(const case_memory& m) {
    if (!m.run.kernel.measured) return;
    ++cases;
    peak = std::max(peak, m.run.kernel.peak_bytes);
    total += m.run.kernel.total_bytes;
    allocations += m.run.kernel.allocations;
    rss = std::max(rss, m.run.kernel_rss_delta.value_or(0));
    leaking += m.leak.leaks;
  }

  /// `kernel heap over N cases: peak 1.0 MiB (largest), 3.0 MiB in 12 allocations in all; RSS
  /// +4.0 KiB at most; 1 case leaks`; empty when nothing was measured.
  std::string line() const {
    if (cases == 0) return {};
    std::string text = fmt::format("kernel heap over {} case{}: peak {} (largest), {} in {} allocation{} in all; "
                                   "RSS +{} at most",
                                   cases, cases == 1 ? "" : "s", format_bytes(peak), format_bytes(total), allocations,
                                   allocations == 1 ? "" : "s", format_bytes(rss));
    if (leaking > 0) text += fmt::format("; {} case{} leak{}", leaking, leaking == 1 ? "" : "s", leaking == 1 ? "s" : "");
    return text;
  }
};

/// Whether the case got as far as running its kernel (its stage times mean something).
bool ran(const case_result& r) { return r.v.st != state::skipped && r.v.st != state::unimplemented; }

/// The largest of a metric over the outputs of a case ("-" when it has none).
template <class Get>
std::string worst_of(const verdict& v, Get get) {
  if (v.outputs.empty()) return "-";
  double m = 0;
  for (const output_verdict& o : v.outputs) m = std::max(m, get(o.m));
  return compact(m);
}

class console_reporter final : public reporter {
 public:
  console_reporter(std::ostream& out, bool verbose, bool show_backend)
      : out_(out), verbose_(verbose), show_backend_(show_backend) {}

  void on_start(const run_options& o) override {
    // o.backend lists the backends comma-separated; the column fits the longest name.
    for (std::size_t pos = 0; pos <= o.backend.size();) {
      std::size_t end = std::min(o.backend.find(',', pos), o.backend.size());
      backend_width_ = std::max(backend_width_, end - pos);
      pos = end + 1;
    }
    fmt::print(out_, "opval: backend {}, policy {}, seed {}{}\n", o.backend, o.pol.to_string(), o.seed,
               o.reference ? ", judged against the reference " + o.reference->name() : "");
  }

  void on_result(const case_result& r) override {
    const verdict& v = r.v;
    per_op_[r.op].add(v.st);
    // With several backends most refusals are one backend lacking a kernel the others have:
    // counted, and listed only when verbose, so the rows show what ran.
    if (show_backend_ && !verbose_ && !ran(r)) {
      ++refusals_hidden_;
      return;
    }
    if (!header_printed_) print_header();
    if (show_backend_) fmt::print(out_, "{:<{}} ", r.backend, backend_width_);
    fmt::print(out_, fmt::runtime(row_format), r.op, detail::descriptor_cell(r), r.contract,
               detail::state_label(v.st),
               worst_of(v, [](const metrics& m) { return m.max_ulps; }),
               worst_of(v, [](const metrics& m) { return m.max_error_over_bound; }),
               duration(r.times.total));
    if (verbose_ || v.st != state::passed) explain(r);
    if (ran(r)) split_.add(r.times), memory_.add(r.memory);
    out_.flush();
  }

  void on_finish(const run_summary& s) override {
    if (per_op_.size() > 1) print_per_op();
    fmt::print(out_, "\n{} case{} in {}\n", s.total(), s.total() == 1 ? "" : "s", duration(s.seconds));
    if (const std::string split = split_.line(); !split.empty()) fmt::print(out_, "{}\n", split);
    if (const std::string memory = memory_.line(); !memory.empty()) fmt::print(out_, "{}\n", memory);
    if (s.mistrusted > 0) fmt::print(out_, "(of which {} mistrusted)\n", s.mistrusted);
    if (s.crashed + s.timed_out > 0)
      fmt::print(out_, "(of which {} crashed and {} timed out: their workers were replaced)\n", s.crashed,
                 s.timed_out);
    if (s.known_failed > 0)
      fmt::print(out_, "(of which {} known failures, listed with their cause: they do not fail the run)\n",
                 s.known_failed);
    if (s.known_passed > 0)
      fmt::print(out_, "({} cases listed as known failures passed: fixed, or the list is stale)\n", s.known_passed);
    if (s.unimplemented > 0) fmt::print(out_, "(of which {} unimplemented)\n", s.unimplemented);
    if (refusals_hidden_ > 0)
      fmt::print(out_, "({} skipped / unimplemented (case, backend) rows not listed; --verbose lists them)\n",
                 refusals_hidden_);
    fmt::print(out_, "{} passed, {} failed, {} skipped\n", s.passed, s.failures(),
               s.skipped + s.unimplemented);
    out_.flush();
  }

 private:
  /// One line per op, so a long run reads at a glance.
  void print_per_op() {
    fmt::print(out_, "\nper op: {:<12} {:>7} {:>7} {:>10} {:>8} {:>13}\n", "", "passed", "failed", "mistrusted",
               "skipped", "unimplemented");
    for (const auto& [op, t] : per_op_)
      fmt::print(out_, "        {:<12} {:>7} {:>7} {:>10} {:>8} {:>13}\n", op, t.passed,
                 t.failed + t.crashed + t.timed_out, t.mistrusted,
                 t.skipped, t.unimplemented);
  }

  void print_header() {
    if (show_backend_) fmt::print(out_, "{:<{}} ", "BACKEND", backend_width_);
    fmt::print(out_, fmt::runtime(row_format), "OP", "DESCRIPTOR", "CONTRACT", "STATE", "MAX ULPS",
               "ERR/BOUND", "TIME");
    header_printed_ = true;
  }

  /// Everything a user needs to act on one case: why, where, and how to rerun it.
  void explain(const case_result& r) {
    const verdict& v = r.v;
    if (!v.reason.empty()) fmt::print(out_, "  {}: {}\n", detail::state_label(v.st), v.reason);
    if (r.known_failure)
      fmt::print(out_, "  known failure{}{} (listed: does not fail the run)\n", r.known_failure->empty() ? "" : ": ",
                 *r.known_failure);
    if (v.st == state::skipped || v.st == state::unimplemented) return;
    if (verbose_) {
      fmt::print(out_, "  descriptor: {}\n", r.descriptor);
      fmt::print(out_, "  backend {}{}{}; policy {}\n", r.backend,
                 r.backend_version.empty() ? "" : " " + r.backend_version,
                 r.exec.implementation.empty() ? "" : " (" + r.exec.implementation + ")",
                 v.policy + (v.policy_note.empty() ? "" : " (" + v.policy_note + ")"));
      if (!r.exec.actual_contract.empty())
        fmt::print(out_, "  actual contract: {}\n", r.exec.actual_contract);
      const case_timings& t = r.times;
      // Judged tensors (opval judge) had no fill and no kernel run: neither times nor memory.
      const bool kernel_ran = r.not_applicable.empty();
      if (kernel_ran)
        fmt::print(out_, "  time: fill {} prepare {} execute {}{} reference {} bound {} compare {}\n",
                   duration(t.fill), duration(t.prepare), duration(t.execute),
                   t.device_kernel >= 0 ? " (device " + duration(t.device_kernel) + ")" : "",
                   duration(t.reference), duration(t.bound), duration(t.compare));
      else
        fmt::print(out_, "  time: reference {} bound {} compare {}\n", duration(t.reference), duration(t.bound),
                   duration(t.compare));
      if (kernel_ran) fmt::print(out_, "  memory: {}\n", memory_text(r.memory));
    }
    if (!r.observed_note.empty()) fmt::print(out_, "  observed precision: {}\n", r.observed_note);
    if (!r.reference_note.empty()) fmt::print(out_, "  reference: {}\n", r.reference_note);
    if (!r.not_applicable.empty()) fmt::print(out_, "  not applicable: {}\n", r.not_applicable);
    for (const output_verdict& o : v.outputs) explain(o, v.reason);
    fmt::print(out_, "  repro: {}\n", repro_of(r));
  }

  /// One output; its reason is omitted when the case line above already gave it.
  void explain(const output_verdict& o, const std::string& case_reason) {
    const metrics& m = o.m;
    fmt::print(out_, "  output {}: {}{}\n", o.name, detail::state_label(o.st),
               o.reason.empty() || o.reason == case_reason ? "" : " - " + o.reason);
    if (!o.bound.empty()) fmt::print(out_, "    bound: {}\n", o.bound);
    fmt::print(out_,
               "    max |err| {}  max rel {}  max ulps {}  p99 ulps {}  err/bound max {} median {}"
               "  beyond bound {}/{}\n",
               compact(m.max_abs_error), compact(m.max_rel_error), compact(m.max_ulps),
               compact(m.p99_ulps), compact(m.max_error_over_bound),
               compact(m.median_error_over_bound), m.beyond_bound, m.count);
    if (m.nan_mismatch || m.inf_mismatch || m.neg_zero_mismatch)
      fmt::print(out_, "    mismatches: nan {} inf {} -0 {}\n", m.nan_mismatch, m.inf_mismatch,
                 m.neg_zero_mismatch);
    if (verbose_) explain_distribution(m);
    if (m.bias.biased || (verbose_ && m.bias.has_power))
      fmt::print(out_, "    bias: {}mean sign-relative {} ulp (z {}), mean {} ulp (z {}) over {}{}\n",
                 m.bias.biased ? "BIASED " : "", compact(m.bias.sign_relative_mean),
                 compact(m.bias.sign_relative_z), compact(m.bias.plain_mean),
                 compact(m.bias.plain_z), m.bias.eligible,
                 m.bias.note.empty() ? "" : "; " + m.bias.note);
    if (m.got_all_zero) fmt::print(out_, "    output is all zero\n");
    else if (m.got_constant) fmt::print(out_, "    output is constant\n");
    if (!m.worst.empty()) explain_worst(m);
  }

  void explain_distribution(const metrics& m) {
    fmt::print(out_, "    mean |err| {}  mean rel {}  mean signed {}  p50 ulps {}  cosine {}\n",
               compact(m.mean_abs_error), compact(m.mean_rel_error), compact(m.mean_signed_error),
               compact(m.p50_ulps), fmt::format("{:.9f}", m.cosine_similarity));
    if (m.ulp_histogram.empty()) return;
    constexpr std::size_t edges = std::size(ulp_bin_edges);
    std::string hist;
    for (std::size_t i = 0; i < m.ulp_histogram.size(); ++i)
      hist += i < edges ? fmt::format(" <={}:{}", compact(ulp_bin_edges[i]), m.ulp_histogram[i])
                        : fmt::format(" >{}:{}", compact(ulp_bin_edges[edges - 1]), m.ulp_histogram[i]);
    fmt::print(out_, "    ulp histogram:{}\n", hist);
  }

  void explain_worst(const metrics& m) {
    fmt::print(out_, "    worst elements:\n");
    fmt::print(out_, "      {:<16} {:>24} {:>24} {:>11} {:>11} {:>9}\n", "index", "expected", "got",
               "|err|", "bound", "ulps");
    for (const worst_element& w : m.worst)
      fmt::print(out_, "      {:<16} {:>24} {:>24} {:>11} {:>11} {:>9}\n", detail::index_string(w.index),
                 fmt::format("{:.17g}", w.expected), fmt::format("{:.9g}", w.got),
                 compact(w.abs_error), w.bound > 0 ? compact(w.bound) : "-", compact(w.ulps));
  }

  std::ostream& out_;
  bool verbose_;
  bool show_backend_;
  std::size_t backend_width_ = 12;
  std::map<std::string, run_summary> per_op_;
  int refusals_hidden_ = 0;
  time_split split_;
  memory_summary memory_;
  bool header_printed_ = false;
};

}  // namespace

std::unique_ptr<reporter> make_console_reporter(std::ostream& out, bool verbose,
                                                bool show_backend) {
  return std::make_unique<console_reporter>(out, verbose, show_backend);
}

}  // namespace opval
