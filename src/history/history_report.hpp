#pragma once
// `opval history`: the history's answers printed for a person (aligned text) or a program
// (--json: one JSON array), and journals recorded into it (docs/FLEET.md, "History").
#include <iosfwd>
#include <string>
#include <vector>

#include "history/history_queries.hpp"
#include "report/html_report.hpp"

namespace opval {

/// One `opval history` question.
struct history_request {
  std::string what;      ///< failing | flaky | trends | slowest | tiers | runs
  std::string database;  ///< the history file
  history_filter filter;
  trend_metric metric = trend_metric::latency;
  bool all = false;      ///< trends: every case with two points, not only those that changed
  bool json = false;
  int recent = 5;        ///< slowest: the latest results a case's time is the median of
};

/// The questions `what` may be, for the help and errors.
const std::vector<std::string>& history_questions();

/// Answers `r` on `out`. Throws opval::error for an unknown question or database.
void answer_history(const history_request& r, std::ostream& out);

/// The history's trends as the HTML report charts them (`opval report --history`): each
/// benchmarked case's median latency over runs, those with a change point first and the change
/// in the name ("... on sim: x1.30 at commit c6"), else each case's time in runs; then each
/// tier's wall time; at most `limit` cases. Points are labelled by commit (else run number).
std::vector<trend_series> history_trend_series(const std::string& database, std::size_t limit = 12);

/// `opval history record`: records each file (an `opval run` journal or an `opval bench`
/// file) as a run of `identity` (commit detected when empty); one line per file on `out`.
std::vector<std::int64_t> record_history_files(const std::string& database, const std::vector<std::string>& files,
                                               const run_identity& identity, std::ostream& out);

}  // namespace opval
