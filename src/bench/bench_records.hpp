#pragma once
// Reading back `opval bench --jsonl` files (schema in docs/BENCHMARKING.md): what `opval bench
// compare` and the run history (history/history.hpp) take from each record.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opval {

/// Where a timed result was placed on the roofline (its record's timing.roofline).
struct bench_roof {
  std::string peak_type, memory_level, bound;  ///< bound: "compute" or "memory"
  double peak_gflops = 0, bandwidth_gbs = 0, percent_of_roof = 0;
};

/// One case of a benchmark file.
struct bench_record {
  std::string descriptor, op, backend, state;
  std::uint64_t seed = 0;
  bool timed = false;
  std::vector<double> values;              ///< per-call times, seconds (timed only)
  std::vector<double> repetition_medians;  ///< opval bench --repetitions
  std::vector<std::string> warnings;       ///< the run's load warning and the case's noise warnings
  double median = 0, ci_low = 0, ci_high = 0;  ///< seconds (timed only)
  double gflops = 0;
  // What the HTML report (report/html_report.hpp) draws the scaling and the roofline from.
  std::string contract;
  double flops = 0, bytes = 0;                  ///< per call (counts)
  double gbytes_per_second = 0, intensity = 0;  ///< timed only
  std::string threads;                          ///< timing.threads as text (timed only)
  std::vector<std::pair<std::string, std::string>> sweep;  ///< the sweep's point, axes in order; empty outside one
  std::optional<bench_roof> roofline;           ///< timed with the machine's peaks only
  std::string check;  ///< the check's `opval run` record as one JSON line (from_json_line reads it)
  /// descriptor, backend and seed: the case, matched across files.
  std::string key() const;
};

/// The records of `path`. Throws opval::error naming file:line for an unreadable file or a
/// line that is not an `opval bench` record.
std::vector<bench_record> read_bench_records(const std::string& path);
/// The records of the lines of `in`, named `name` in errors.
std::vector<bench_record> read_bench_records(std::istream& in, const std::string& name);

/// Whether the first record of `path` is an `opval bench` record (else an `opval run` journal
/// or not a journal at all). Throws opval::error when the file cannot be read.
bool is_bench_file(const std::string& path);

}  // namespace opval
