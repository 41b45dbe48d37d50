#pragma once
// Output of `opval bench` (docs/BENCHMARKING.md): a console table, JSON Lines records and CSV
// rows, with the same case identity (descriptor, op, contract, seed, backend) as `opval run`.
#include <iosfwd>
#include <string>

#include "opval/bench.hpp"
#include "opval/bench_compare.hpp"
#include "opval/environment.hpp"
#include "opval/sweep.hpp"

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

/// The console table: one row per case, the check's reason under a case that was not timed,
/// and the stop reason under one that missed its CI target.
class bench_table {
 public:
  bench_table(std::ostream& out, bool show_backend);
  void row(const bench_result& r);
  /// The closing line, `N timed, N failed, N skipped`; returns false when a check failed or
  /// nothing was timed (the exit code's rule).
  bool finish();

 private:
  std::ostream& out_;
  bool show_backend_;
  bool header_printed_ = false;
  int timed_ = 0, failed_ = 0, skipped_ = 0;
};

/// The table of `opval bench compare`: one row per case (base and new medians, the ratio
/// with its interval, the test's p-value, the verdict, or why it was not compared), then
/// `N slower, N faster, N same, N too noisy to tell, N not compared`. Returns false when a
/// case is slower (the exit code's rule for CI gating).
bool print_comparison(std::ostream& out, const std::vector<compared_case>& cases, const compare_options& o);

/// The scaling table: one row per case, the axes' values, the backend, the median, GFLOP/s and
/// GB/s; with a `threads` axis also the speed-up over the first thread count of the same other
/// values, and the parallel efficiency (speed-up / thread ratio).
void print_scaling_table(std::ostream& out, const std::vector<sweep_axis>& axes, const std::vector<sweep_row>& rows);

}  // namespace opval
