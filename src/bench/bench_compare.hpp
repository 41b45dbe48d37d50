#pragma once
// Regression verdicts between two benchmark runs (`opval bench compare BASE NEW`,
// docs/BENCHMARKING.md): per case, the ratio of medians new / base with its bootstrap
// confidence interval, a Mann-Whitney U test over per-repetition medians, and a verdict.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bootstrap.hpp"
#include "bench/rank_tests.hpp"

namespace opval {

enum class change_verdict { faster, slower, same, too_noisy };
std::string_view to_string(change_verdict v);

struct compare_options {
  double threshold = 0.05;  ///< a change smaller than this fraction is "same"
  double alpha = 0.05;      ///< the significance level of the Mann-Whitney test
  std::size_t repetitions = 10;  ///< chunks a series is cut into when it has no repetitions of its own
  bootstrap_options ci;
};

struct case_change {
  double base_median = 0, new_median = 0;
  interval ratio;            ///< of new / base medians
  double ratio_point = 0;    ///< new_median / base_median
  rank_test_result test;     ///< over the per-repetition medians
  change_verdict verdict = change_verdict::too_noisy;
  std::string why;           ///< "ratio 0.81 [0.80, 0.82], Mann-Whitney p = 1.1e-05"
  std::string noisy_because; ///< when too noisy: each reason, "; "-separated
};

/// One side of a comparison: a case's per-call times, the medians of its own repetitions
/// (opval bench --repetitions; may be empty), and the warnings recorded with it that say its
/// figure depends on when it was taken (other load on the machine, the case's noise warnings).
struct compare_side {
  std::span<const double> values;
  std::span<const double> repetitions = {};
  std::vector<std::string> warnings = {};
};

/// The verdict for one case from its two sides:
/// - slower / faster: the ratio's interval lies wholly beyond 1 +- threshold, the test
///   rejects "no shift" at alpha, neither side recorded a warning, and the change is wider
///   than the spread (max / min) of either side's repetition medians;
/// - same: the interval lies wholly within 1 +- threshold;
/// - too noisy: anything else, each reason in `noisy_because`.
/// The test (and the spread) use the per-repetition medians when both sides have 3 or more
/// (opval bench --repetitions), else the medians of o.repetitions consecutive chunks of each
/// series. Throws opval::error when a series has fewer than 2 samples.
case_change compare_sides(const compare_side& base, const compare_side& next, const compare_options& o = {});

/// compare_sides of two series that recorded no warnings.
case_change compare_series(std::span<const double> base, std::span<const double> next, const compare_options& o = {},
                           std::span<const double> base_repetitions = {}, std::span<const double> next_repetitions = {});

/// One case of two `opval bench --jsonl` files, matched by descriptor, backend and seed.
struct compared_case {
  std::string descriptor, backend;
  std::optional<case_change> change;  ///< absent when the case cannot be compared
  std::string note;                   ///< why not: "only in BASE", "not timed in NEW (FAILED)"
};

/// Every case of `base_path` and `new_path`, in the base file's order, then those only in
/// the new one. Throws opval::error naming file:line for an unreadable file or a line that
/// is not an `opval bench` record.
std::vector<compared_case> compare_bench_files(const std::string& base_path, const std::string& new_path,
                                               const compare_options& o = {});

}  // namespace opval
