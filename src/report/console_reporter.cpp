// The console reporter: one row per case that ran (state, err/bound, ULPs where they mean
// something, time, the full problem), every case that did not pass explained under its row
// (reason, bound, worst elements, wrapped to the terminal) with the command that reproduces it;
// at the end the refusals counted per backend and reason, the time split, a short summary of
// every failure (one line each, as pytest's), and a closing line `N passed, N failed,
// N skipped` that scripts can grep.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "opval/reporter.hpp"
#include "core/heap_stats.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

using detail::compact;
using detail::duration;

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

/// err/bound, the figure the verdict is decided by: its largest over the outputs ("-" when
/// the case has none).
std::string error_over_bound_cell(const verdict& v) {
  if (v.outputs.empty()) return "-";
  double m = 0;
  for (const output_verdict& o : v.outputs) m = std::max(m, o.m.max_error_over_bound);
  return compact(m);
}

/// The ULP error where it means something: at the output's scale (metrics::max_scaled_ulps).
std::string ulps_cell(const verdict& v) {
  if (v.outputs.empty()) return "-";
  double m = 0;
  for (const output_verdict& o : v.outputs) m = std::max(m, o.m.max_scaled_ulps);
  return compact(m);
}

/// The refusals of a run, counted per backend and reason in the order they first came.
class refusal_counts {
 public:
  void add(const case_result& r) {
    const auto key = std::tuple(r.backend, r.v.st, r.v.reason);
    auto it = std::find_if(groups_.begin(), groups_.end(), [&](const group& g) { return g.key == key; });
    if (it == groups_.end()) groups_.push_back({key, 1});
    else ++it->count;
  }

  /// "not run: N (case, backend) pairs refused" and one line per backend and reason, the most
  /// frequent first, at most `shown` reasons per backend; empty when nothing was refused.
  std::string text(int width, bool listed) const {
    int total = 0;
    for (const group& g : groups_) total += g.count;
    if (total == 0) return {};
    // Appended in place: GCC 12 flags the temporary of a concatenation (-Wrestrict).
    std::string out = "\n";
    out += detail::wrap(fmt::format("not run: {} (case, backend) pair{} refused, by backend and reason{}:", total,
                                    total == 1 ? "" : "s", listed ? "" : " (--verbose lists them)"),
                        width, 2, 0);
    std::vector<std::string> backends;
    for (const group& g : groups_)
      if (std::find(backends.begin(), backends.end(), std::get<0>(g.key)) == backends.end())
        backends.push_back(std::get<0>(g.key));
    for (const std::string& b : backends) {
      std::vector<group> mine;
      for (const group& g : groups_)
        if (std::get<0>(g.key) == b) mine.push_back(g);
      std::stable_sort(mine.begin(), mine.end(), [](const group& x, const group& y) { return x.count > y.count; });
      for (std::size_t i = 0; i < mine.size() && i < shown; ++i) {
        const auto& [backend, st, reason] = mine[i].key;
        out += detail::wrap(fmt::format("{} {} {}: {}", backend, mine[i].count, detail::state_label(st),
                                        reason.empty() ? "(no reason given)" : reason),
                            width, 6, 2);
      }
      if (mine.size() > shown) {
        int rest = 0;
        for (std::size_t i = shown; i < mine.size(); ++i) rest += mine[i].count;
        out += fmt::format("  {} {} more, for {} other reasons\n", b, rest, mine.size() - shown);
      }
    }
    return out;
  }

 private:
  static constexpr std::size_t shown = 6;
  struct group {
    std::tuple<std::string, state, std::string> key;
    int count = 0;
  };
  std::vector<group> groups_;
};

/// One line per case that failed (listed known failures aside), as pytest's short test summary:
/// the state, the repro command, whole, then its reason, cut to the width (the explanation
/// above has all of it).
class failure_summary {
 public:
  void add(const case_result& r) {
    if (!is_failure(r.v.st) || r.known_failure) return;
    lines_.push_back({r.v.st, repro_of(r), r.v.reason});
  }

  std::string text(int width, bool colour) const {
    if (lines_.empty()) return {};
    std::string out = fmt::format("\nshort summary of failures ({}):\n", lines_.size());
    for (const line& l : lines_) {
      const std::string label = detail::state_label(l.st);
      std::string text = l.repro;
      if (!l.reason.empty()) {
        // At least a readable start of the reason, however long the command.
        const std::size_t room = std::max<std::size_t>(
            60, static_cast<std::size_t>(std::max(0, width)) - std::min<std::size_t>(width, label.size() + 1 + text.size() + 3));
        text += " - " + (l.reason.size() <= room ? l.reason : l.reason.substr(0, room - 3) + "...");
      }
      out += detail::paint(label, l.st, colour) + " " + text + "\n";
    }
    return out;
  }

 private:
  struct line {
    state st;
    std::string repro, reason;
  };
  std::vector<line> lines_;
};

constexpr int state_width = 13, number_width = 9, time_width = 8;

class console_reporter final : public reporter {
 public:
  console_reporter(std::ostream& out, const console_options& options) : out_(out), o_(options) {}

  void on_start(const run_options& o) override {
    // o.backend lists the backends comma-separated; the column fits the longest name.
    for (std::size_t pos = 0; pos <= o.backend.size();) {
      std::size_t end = std::min(o.backend.find(',', pos), o.backend.size());
      backend_width_ = std::max(backend_width_, end - pos);
      pos = end + 1;
    }
    if (o_.quiet) return;
    fmt::print(out_, "opval: backend {}, policy {}, seed {}{}\n", o.backend, o.pol.to_string(), o.seed,
               o.reference ? ", judged against the reference " + o.reference->name() : "");
  }

  void on_result(const case_result& r) override {
    const verdict& v = r.v;
    per_op_[r.op].add(v.st);
    failures_.add(r);
    if (ran(r)) split_.add(r.times), memory_.add(r.memory);
    if (r.verified.method == "sampled") ++sampled_;
    // A refusal is counted, and listed only when verbose: the rows show what ran.
    if (!ran(r)) refusals_.add(r);
    if (o_.quiet || (!o_.verbose && !ran(r))) return;
    if (!header_printed_) print_header();
    print_row(r);
    if (o_.verbose || v.st != state::passed) explain(r);
    out_.flush();
  }

  void on_finish(const run_summary& s) override {
    if (o_.quiet) {
      fmt::print(out_, "{}{}\n", failures_.text(o_.width, o_.colour), closing_line(s));
      out_.flush();
      return;
    }
    if (per_op_.size() > 1) print_per_op();
    fmt::print(out_, "{}", refusals_.text(o_.width, o_.verbose));
    fmt::print(out_, "\n{} case{} in {}\n", s.total(), s.total() == 1 ? "" : "s", duration(s.seconds));
    if (const std::string split = split_.line(); !split.empty()) fmt::print(out_, "{}", detail::wrap(split, o_.width, 2, 0));
    if (const std::string memory = memory_.line(); !memory.empty()) fmt::print(out_, "{}", detail::wrap(memory, o_.width, 2, 0));
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
    if (sampled_ > 0)
      fmt::print(out_, "{}", detail::wrap(fmt::format("({} case{} verified by a sample of elements and checksums, the "
                                                      "kernel run once: no determinism or perturbation check; "
                                                      "--verify full checks every element)",
                                                      sampled_, sampled_ == 1 ? "" : "s"),
                                          o_.width, 1, 0));
    fmt::print(out_, "{}{}\n", failures_.text(o_.width, o_.colour), closing_line(s));
    out_.flush();
  }

 private:
  std::string closing_line(const run_summary& s) const {
    const int failed = s.failures() - s.known_failed;
    return fmt::format("{} passed, {} failed, {} skipped",
                       s.passed > 0 ? detail::paint(std::to_string(s.passed), state::passed, o_.colour) : "0",
                       failed > 0 ? detail::paint(std::to_string(s.failures()), state::failed, o_.colour)
                                  : std::to_string(s.failures()),
                       s.skipped + s.unimplemented);
  }

  /// One line per op, so a long run reads at a glance.
  void print_per_op() {
    fmt::print(out_, "\nper op: {:<12} {:>7} {:>7} {:>10} {:>8} {:>13}\n", "", "passed", "failed", "mistrusted",
               "skipped", "unimplemented");
    for (const auto& [op, t] : per_op_)
      fmt::print(out_, "        {:<12} {:>7} {:>7} {:>10} {:>8} {:>13}\n", op, t.passed,
                 t.failed + t.crashed + t.timed_out, t.mistrusted,
                 t.skipped, t.unimplemented);
  }

  /// The columns before the problem: [backend] state err/bound ulps time.
  std::string columns(const std::string& backend, const std::string& state_text, std::size_t state_chars,
                      const std::string& over, const std::string& ulps, const std::string& time) const {
    std::string line;
    if (o_.show_backend) line += fmt::format("{:<{}} ", backend, backend_width_);
    // Padded by its visible width: colour codes take no columns.
    line += state_text + std::string(state_chars < state_width ? state_width - state_chars : 0, ' ');
    line += fmt::format(" {:>{}} {:>{}} {:>{}}  ", over, number_width, ulps, number_width, time, time_width);
    return line;
  }

  void print_header() {
    fmt::print(out_, "{}PROBLEM\n", columns("BACKEND", "STATE", 5, "ERR/BOUND", "ULPS", "TIME"));
    header_printed_ = true;
  }

  /// The row; the full problem follows on the same line when it fits the width, else on a line
  /// of its own under it (never cut: it can be copied back as a problem).
  void print_row(const case_result& r) {
    const bool known = r.known_failure && is_failure(r.v.st);
    const std::string label = detail::state_label(r.v.st) + (known ? "(known)" : "");
    const std::string painted = detail::paint(label, r.v.st, o_.colour, known);
    const std::string line = columns(r.backend, painted, label.size(), error_over_bound_cell(r.v), ulps_cell(r.v),
                                     duration(r.times.total));
    const std::size_t prefix = line.size() - (painted.size() - label.size());  // colour codes take no columns
    const std::size_t width = static_cast<std::size_t>(o_.width);
    if (prefix + r.descriptor.size() <= width) {
      fmt::print(out_, "{}{}\n", line, r.descriptor);
      return;
    }
    fmt::print(out_, "{}\n  {}\n", line.substr(0, line.find_last_not_of(' ') + 1), r.descriptor);
  }

  /// A line of an explanation, wrapped to the width under its indent.
  void say(int indent, const std::string& text) { fmt::print(out_, "{}", detail::wrap(text, o_.width, indent + 2, indent)); }

  /// Everything a user needs to act on one case: why, where, and how to rerun it.
  void explain(const case_result& r) {
    const verdict& v = r.v;
    if (!v.reason.empty()) say(2, fmt::format("{}: {}", detail::state_label(v.st), v.reason));
    if (r.known_failure)
      say(2, fmt::format("known failure{}{} (listed: does not fail the run)", r.known_failure->empty() ? "" : ": ",
                         *r.known_failure));
    if (v.st == state::skipped || v.st == state::unimplemented) return;
    if (o_.verbose) {
      say(2, fmt::format("backend {}{}{}; policy {}", r.backend, r.backend_version.empty() ? "" : " " + r.backend_version,
                         r.exec.implementation.empty() ? "" : " (" + r.exec.implementation + ")",
                         v.policy + (v.policy_note.empty() ? "" : " (" + v.policy_note + ")")));
      if (!r.exec.actual_contract.empty()) say(2, "actual contract: " + r.exec.actual_contract);
      const case_timings& t = r.times;
      // Judged tensors (opval judge) had no fill and no kernel run: neither times nor memory.
      const bool kernel_ran = r.not_applicable.empty();
      if (kernel_ran)
        say(2, fmt::format("time: fill {} prepare {} execute {}{} reference {} bound {} compare {}", duration(t.fill),
                           duration(t.prepare), duration(t.execute),
                           t.device_kernel >= 0 ? " (device " + duration(t.device_kernel) + ")" : "",
                           duration(t.reference), duration(t.bound), duration(t.compare)));
      else
        say(2, fmt::format("time: reference {} bound {} compare {}", duration(t.reference), duration(t.bound),
                           duration(t.compare)));
      if (kernel_ran) say(2, "memory: " + memory_text(r.memory));
    }
    if (!r.observed_note.empty()) say(2, "observed precision: " + r.observed_note);
    if (!r.reference_note.empty()) say(2, "reference: " + r.reference_note);
    if (!r.not_applicable.empty()) say(2, "not applicable: " + r.not_applicable);
    for (const output_verdict& o : v.outputs) explain(o, v.reason);
    // Whole, on one line, however long: it is copied as it is.
    fmt::print(out_, "  repro: {}\n", repro_of(r));
  }

  /// One output; its reason is omitted when the case line above already gave it. Its bound
  /// formula only where it failed (or verbose): the formula is what to read when it decided.
  void explain(const output_verdict& o, const std::string& case_reason) {
    const metrics& m = o.m;
    say(2, fmt::format("output {}: {}{}", o.name, detail::state_label(o.st),
                       o.reason.empty() || o.reason == case_reason ? "" : " - " + o.reason));
    if (!o.bound.empty() && (o_.verbose || o.st != state::passed)) say(4, "bound: " + o.bound);
    say(4, fmt::format("err/bound max {} median {}  beyond bound {}/{}  max |err| {}  max rel {}", compact(m.max_error_over_bound),
                       compact(m.median_error_over_bound), m.beyond_bound, m.count, compact(m.max_abs_error),
                       compact(m.max_rel_error)));
    // Per element, ULPs of results near zero mean little (metrics::max_scaled_ulps): both shown.
    say(4, fmt::format("ulps: {} at the output's scale; per element max {} p99 {}", compact(m.max_scaled_ulps),
                       compact(m.max_ulps), compact(m.p99_ulps)));
    if (m.nan_mismatch || m.inf_mismatch || m.neg_zero_mismatch)
      say(4, fmt::format("mismatches: nan {} inf {} -0 {}", m.nan_mismatch, m.inf_mismatch, m.neg_zero_mismatch));
    if (o_.verbose) explain_distribution(m);
    if (m.bias.biased || (o_.verbose && m.bias.has_power))
      say(4, fmt::format("bias: {}mean sign-relative {} ulp (z {}), mean {} ulp (z {}) over {}{}",
                         m.bias.biased ? "BIASED " : "", compact(m.bias.sign_relative_mean),
                         compact(m.bias.sign_relative_z), compact(m.bias.plain_mean), compact(m.bias.plain_z),
                         m.bias.eligible, m.bias.note.empty() ? "" : "; " + m.bias.note));
    if (m.got_all_zero) say(4, "output is all zero");
    else if (m.got_constant) say(4, "output is constant");
    if (!m.worst.empty()) explain_worst(m);
  }

  void explain_distribution(const metrics& m) {
    say(4, fmt::format("mean |err| {}  mean rel {}  mean signed {}  p50 ulps {}  cosine {}", compact(m.mean_abs_error),
                       compact(m.mean_rel_error), compact(m.mean_signed_error), compact(m.p50_ulps),
                       fmt::format("{:.9f}", m.cosine_similarity)));
    if (m.ulp_histogram.empty()) return;
    constexpr std::size_t edges = std::size(ulp_bin_edges);
    std::string hist = "ulp histogram:";
    for (std::size_t i = 0; i < m.ulp_histogram.size(); ++i)
      hist += i < edges ? fmt::format(" <={}:{}", compact(ulp_bin_edges[i]), m.ulp_histogram[i])
                        : fmt::format(" >{}:{}", compact(ulp_bin_edges[edges - 1]), m.ulp_histogram[i]);
    say(4, hist);
  }

  /// The worst elements by err/bound; the expected value to 17 digits where the width allows
  /// (every bit of the fp64 reference), else to 10, else to 7.
  void explain_worst(const metrics& m) {
    int index_width = 5;
    for (const worst_element& w : m.worst)
      index_width = std::max(index_width, static_cast<int>(detail::index_string(w.index).size()));
    // Two value columns share what the indent (6), the index and the three numbers (10 each) leave.
    const int value_width = std::clamp((o_.width - 6 - index_width - 2 - 30) / 2, 14, 24);
    const int digits = value_width >= 24 ? 17 : value_width >= 17 ? 10 : 7;
    fmt::print(out_, "    worst elements:\n");
    fmt::print(out_, "      {:<{}} {:>{}} {:>{}} {:>9} {:>9} {:>9}\n", "index", index_width, "expected", value_width,
               "got", value_width, "|err|", "bound", "ulps");
    for (const worst_element& w : m.worst)
      fmt::print(out_, "      {:<{}} {:>{}} {:>{}} {:>9} {:>9} {:>9}\n", detail::index_string(w.index), index_width,
                 fmt::format("{:.{}g}", w.expected, digits), value_width,
                 fmt::format("{:.{}g}", w.got, std::min(digits, 9)), value_width, compact(w.abs_error),
                 w.bound > 0 ? compact(w.bound) : "-", compact(w.ulps));
  }

  std::ostream& out_;
  console_options o_;
  std::size_t backend_width_ = 7;
  int sampled_ = 0;  // cases verified by sample (--verify sampled or auto)
  std::map<std::string, run_summary> per_op_;
  refusal_counts refusals_;
  failure_summary failures_;
  time_split split_;
  memory_summary memory_;
  bool header_printed_ = false;
};

}  // namespace

std::unique_ptr<reporter> make_console_reporter(std::ostream& out, const console_options& options) {
  return std::make_unique<console_reporter>(out, options);
}

}  // namespace opval
