#pragma once
// Output of `opval bench` (docs/BENCHMARKING.md): a console table, JSON Lines records and CSV
// rows, with the same case identity (descriptor, op, contract, seed, backend) as `opval run`.
#include <iosfwd>
#include <memory>
#include <string>

#include "bench/bench.hpp"
#include "bench/bench_compare.hpp"
#include "bench/environment.hpp"
#include "bench/sweep.hpp"

namespace opval {

/// One JSON record: the case identity and the check's state at the top, the figures under
/// "timing" (null when the case was not timed), every sample, the check's own `run` record
/// under "check", and `env` (when given) under "environment".
std::string bench_json_line(const bench_result& r, const environment* env = nullptr);

/// The environment as the JSON object the records carry.
std::string environment_json(const environment& e);

/// CSV with a header row; one row per case, the figures empty when not timed.
std::string bench_csv_header();
std::string bench_csv_row(const bench_result& r);

/// The tally of a bench run: timed cases, checks that failed (known failures aside), and
/// cases skipped or unimplemented (or known to fail).
struct bench_summary {
  int timed = 0, failed = 0, skipped = 0;
  void add(const bench_result& r);
  /// The exit rule of `opval bench`: no check failed and at least one case was timed.
  bool ok() const;
};

/// Where bench results go, as opval/reporter.hpp's reporters take run results.
class bench_reporter {
 public:
  virtual ~bench_reporter() = default;
  /// One case, at its sweep point (empty outside sweeps) from --problems template `template_index`.
  virtual void on_result(const bench_result& r, const sweep_point& point, std::size_t template_index) = 0;
  virtual void on_finish(const bench_summary& s) {}
};

/// The console table: one row per case (its backend too when `show_backend`), the check's
/// reason and repro under a case that was not timed, the stop reason under one that missed
/// its CI target; then the closing line `N timed, N failed, N skipped` and, for a sweep over
/// `axes`, the scaling table.
std::unique_ptr<bench_reporter> make_bench_console_reporter(std::ostream& out, bool show_backend,
                                                            std::vector<sweep_axis> axes = {});
/// bench_json_line per case, with `env`.
std::unique_ptr<bench_reporter> make_bench_jsonl_reporter(std::ostream& out, environment env);
/// JUnit XML at the end (report/junit_xml.hpp): a testcase per case, passed when timed, with
/// its median, CI and throughput as properties; a check that did not pass as `opval run` has it.
std::unique_ptr<bench_reporter> make_bench_junit_reporter(std::ostream& out);
/// bench_csv_header, then bench_csv_row per case.
std::unique_ptr<bench_reporter> make_bench_csv_reporter(std::ostream& out);

/// The table of `opval bench compare`: one row per case (base and new medians, the ratio
/// with its interval, the test's p-value, the verdict, or why it was not compared; why a case
/// is too noisy to tell under its row), then
/// `N slower, N faster, N same, N too noisy to tell, N not compared`. Returns false when a
/// case is slower (the exit code's rule for CI gating).
bool print_comparison(std::ostream& out, const std::vector<compared_case>& cases, const compare_options& o);

/// The scaling table: one row per case, the axes' values, the backend, the median, GFLOP/s and
/// GB/s; with a `threads` axis also the speed-up over the first thread count of the same other
/// values, and the parallel efficiency (speed-up / thread ratio).
void print_scaling_table(std::ostream& out, const std::vector<sweep_axis>& axes, const std::vector<sweep_row>& rows);

}  // namespace opval
