#pragma once
// A report to share (`opval report`, opval.report, docs/REPORTS.md): one self-contained HTML
// file, readable offline and attachable to a ticket, made from a run's journals and bench
// records. Inline CSS and SVG only: no script and no external reference.
#include <string>
#include <utility>
#include <vector>

namespace opval {

/// One case's figure across runs, oldest first: (run label, value) per run. The input of the
/// "Performance trends" section.
struct trend_series {
  std::string name;   ///< the case: descriptor and backend
  std::string unit;   ///< what the values are ("median seconds", "GFLOP/s")
  std::vector<std::pair<std::string, double>> points;
};

/// What a report is made of.
struct report_sources {
  std::vector<std::string> journals;  ///< `opval run --jsonl` files (or `opval merge --jsonl`)
  std::vector<std::string> bench;     ///< `opval bench --jsonl` files
  std::vector<trend_series> trends;   ///< from a run history; empty: the section says none was given
  std::string title = "opval report";
};

/// The report as one HTML document: the summary, every failure with its worst elements and
/// heatmap, the error and ULP histograms, the bias test, the scaling curves, the roofline and
/// the performance trends. Throws opval::error naming the file for a journal or bench file
/// that cannot be read or holds a line that is not one of its records.
std::string html_report(const report_sources& sources);

/// html_report written to `path` (its folder made when missing); refuses a path that is one
/// of the sources, which it would overwrite. Returns what it holds, in words ("12 cases and 4
/// benchmarks"; a bench record's check counts as a case).
std::string write_html_report(const report_sources& sources, const std::string& path);

}  // namespace opval
