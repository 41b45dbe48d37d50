#pragma once
// Rank-based significance tests for timing samples, which are skewed and heavy-tailed, so
// tests on means (t-tests) would mislead: the Mann-Whitney U test (is one series shifted
// against the other? used by `opval bench compare` on per-repetition medians) and the
// Mann-Kendall test (does a series drift over time? a noise warning).
#include <span>

namespace opval {

struct rank_test_result {
  double statistic = 0;  ///< U of the first series (Mann-Whitney), S (Mann-Kendall)
  double z = 0;          ///< the normal approximation's z (0 when the exact distribution was used)
  double p_value = 1;    ///< two-sided
  bool exact = false;    ///< p from the exact distribution (small samples without ties)
};

/// Two-sided Mann-Whitney U test of `a` against `b`. U counts the pairs (a_i, b_j) with
/// a_i > b_j, ties as 1/2. Exact p-value without ties when both series have at most 25
/// values; otherwise the normal approximation with the tie correction of the variance and a
/// continuity correction. Throws opval::error when a series is empty.
rank_test_result mann_whitney_u(std::span<const double> a, std::span<const double> b);

/// Two-sided Mann-Kendall trend test of `series` in its order: S = sum over i < j of
/// sign(x_j - x_i), its variance corrected for ties, z with a continuity correction.
/// Positive S: the values grow over time. Throws opval::error with fewer than 3 values.
rank_test_result mann_kendall(std::span<const double> series);

}  // namespace opval
