#pragma once
// Observers of results: a new output format is one class.
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "opval/runner.hpp"

namespace opval {

/// Totals of a run.
struct run_summary {
  int passed = 0, failed = 0, mistrusted = 0, skipped = 0, unimplemented = 0;
  int crashed = 0, timed_out = 0;  ///< CRASH and TIMEOUT cases (process isolation)
  int known_failed = 0;  ///< of failed + mistrusted: listed as known failures
  int known_passed = 0;  ///< of passed: listed as known failures (fixed, or the list is stale)
  double seconds = 0;
  int total() const { return passed + failed + mistrusted + skipped + unimplemented + crashed + timed_out; }
  /// Cases that did not pass although they ran: FAILED, MISTRUSTED, CRASH and TIMEOUT.
  int failures() const { return failed + mistrusted + crashed + timed_out; }
  void add(state s);
  void add(const case_result& r);
};

class reporter {
 public:
  virtual ~reporter() = default;
  virtual void on_start(const run_options& o) {}
  virtual void on_result(const case_result& r) = 0;
  virtual void on_finish(const run_summary& s) {}
};

/// How the console reporter lays its output out.
struct console_options {
  bool verbose = false;       ///< explain every case, list every refusal row
  bool show_backend = false;  ///< a BACKEND column (runs of several backends)
  bool quiet = false;         ///< only the short summary of failures and the totals
  int width = 120;            ///< the terminal's columns: explanations wrap to it, a long problem gets its own line
  bool colour = false;        ///< ANSI colours on the states
};

/// A readable table of what ran (state, err/bound, ULPs where they mean something, time, the
/// full problem), failures explained with their repro command, refusals counted per backend
/// and reason, a short summary of every failure, and the closing line `N passed, N failed,
/// N skipped`.
std::unique_ptr<reporter> make_console_reporter(std::ostream& out, const console_options& options = {});
/// When results came from more than one backend, at the end of the run a table with one row
/// per problem and one column per backend (state and err/bound), fitted to `width`, then
/// `N passed, N failed, N skipped` per backend.
std::unique_ptr<reporter> make_side_by_side_reporter(std::ostream& out, int width = 120);
/// JUnit XML, as pytest's --junitxml writes it, at the end of the run: one testcase per
/// (problem, backend) named by its descriptor, failures with their reason and repro, skips and
/// known failures as skipped with the reason. `command` names the suite ("opval run").
std::unique_ptr<reporter> make_junit_reporter(std::ostream& out, std::string command);
/// JSON Lines: one record per case (schema in docs/CLI.md).
std::unique_ptr<reporter> make_jsonl_reporter(std::ostream& out);

}  // namespace opval

namespace opval {
/// At the end of a run, a table per op and contract of observed error / bound (median of the
/// cases' medians, max of their maxima) under the bound policy; bounds looser than 100x the
/// largest observed error are flagged.
std::unique_ptr<reporter> make_tightness_reporter(std::ostream& out);
}  // namespace opval
