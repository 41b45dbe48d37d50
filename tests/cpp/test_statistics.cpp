// The benchmark engine's statistics against known values and known distributions: summaries
// of fixed series, the block bootstrap's coverage of a true median for independent and for
// autocorrelated samples, the Mann-Whitney test's exact p-values, false-alarm rate and power,
// the order-statistic interval the stopping rule uses, and the Mann-Kendall test on drifting
// and on stationary series.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "bench/bootstrap.hpp"
#include "opval/error.hpp"
#include "bench/rank_interval.hpp"
#include "bench/rank_tests.hpp"
#include "core/rng.hpp"
#include "bench/sample_summary.hpp"

namespace opval {
namespace {

// n draws of mean + sd * N(0, 1), made AR(1) with coefficient phi (0: independent), from
// stream `trial` of a fixed seed; the stationary distribution is N(mean, sd^2) either way.
std::vector<double> normal_series(std::size_t n, double mean, double sd, double phi, std::uint64_t trial) {
  std::vector<double> out(n);
  double state = random_normal(7, trial, 0);
  const double innovation = std::sqrt(1 - phi * phi);
  for (std::size_t i = 0; i < n; ++i) {
    state = phi * state + innovation * random_normal(7, trial, i + 1);
    out[i] = mean + sd * state;
  }
  return out;
}

TEST(sample_summary, fixed_series_have_their_textbook_values) {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  const sample_summary s = summarize(x);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(32.0 / 7));
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.mad, 0.5);  // deviations 2.5 .5 .5 .5 .5 .5 2.5 4.5
  EXPECT_DOUBLE_EQ(s.p10, 2 + 0.7 * 2);  // type 7: h = 0.7
  EXPECT_DOUBLE_EQ(s.p90, 7 + 0.3 * 2);
  EXPECT_DOUBLE_EQ(s.cv, s.stdev / 5);
  // q1 = 4, q3 = 5.5: the fences are 1.75 and 7.75, so 9 is an outlier.
  EXPECT_EQ(s.outliers_low, 0u);
  EXPECT_EQ(s.outliers_high, 1u);
}

TEST(sample_summary, tukey_fences_count_injected_outliers_on_each_side) {
  std::vector<double> x = normal_series(1000, 100, 1, 0, 3);
  x[10] = 150, x[500] = 170, x[900] = 40;
  const sample_summary s = summarize(x);
  EXPECT_GE(s.outliers_high, 2u);
  EXPECT_GE(s.outliers_low, 1u);
  EXPECT_LE(s.outliers(), 3u + 15u) << "about 0.7% of a normal lies beyond the fences";
  EXPECT_NEAR(1.4826 * s.mad, 1.0, 0.1) << "the scaled MAD estimates sigma";
  EXPECT_NEAR(s.median, 100, 0.1);
}

TEST(sample_summary, chunk_medians_cut_a_series_into_repetitions) {
  const std::vector<double> x = {1, 2, 3, 10, 11, 12, 20, 21, 22, 23};
  EXPECT_EQ(chunk_medians(x, 3), (std::vector<double>{2, 11, 21.5}));
  EXPECT_EQ(chunk_medians(x, 100).size(), x.size());
}

TEST(sample_summary, bad_series_are_errors) {
  EXPECT_THROW(summarize(std::vector<double>{}), error);
  EXPECT_THROW(summarize(std::vector<double>{1, NAN}), error);
  EXPECT_THROW(summarize(std::vector<double>{1, INFINITY}), error);
  const sample_summary one = summarize(std::vector<double>{3});
  EXPECT_EQ(one.stdev, 0);
  EXPECT_EQ(one.median, 3);
}

// Of `trials` series of n samples, the share whose interval contains the true median.
double coverage(std::size_t n, double phi, std::size_t block, int trials) {
  int hits = 0;
  for (int t = 0; t < trials; ++t) {
    const std::vector<double> x = normal_series(n, 10, 1, phi, 100 + static_cast<std::uint64_t>(t));
    const interval ci = median_ci(x, {.confidence = 0.95, .resamples = 400, .block = block, .seed = 5});
    hits += ci.low <= 10 && 10 <= ci.high;
  }
  return static_cast<double>(hits) / trials;
}

TEST(bootstrap, covers_the_true_median_of_independent_samples_at_its_confidence) {
  const double c = coverage(200, 0.0, 0, 300);
  EXPECT_GT(c, 0.90);
  EXPECT_LT(c, 0.99);
}

// With autocorrelated samples, resampling single samples gives intervals that are too narrow;
// blocks of the automatic length bring the coverage near the nominal 95% (1000 samples with
// AR(1) coefficient 0.8: about 10 lags of significant dependence).
TEST(bootstrap, blocks_keep_the_coverage_of_autocorrelated_samples) {
  const double single = coverage(1000, 0.8, 1, 120);
  const double blocked = coverage(1000, 0.8, 0, 120);
  EXPECT_LT(single, 0.75) << "independent resampling under-covers: the test would prove nothing otherwise";
  EXPECT_GT(blocked, 0.87);
}

// The same coverage for the stopping rule's order-statistic interval: near 95% for independent
// samples, and kept for autocorrelated ones by its integrated-autocorrelation widening, where the
// plain binomial ranks under-cover.
double rank_coverage(std::size_t n, double phi, int trials) {
  int hits = 0;
  for (int t = 0; t < trials; ++t) {
    const interval ci = median_ci_by_ranks(normal_series(n, 10, 1, phi, 100 + static_cast<std::uint64_t>(t)));
    hits += ci.low <= 10 && 10 <= ci.high;
  }
  return static_cast<double>(hits) / trials;
}

TEST(rank_interval, covers_the_true_median_of_independent_and_dependent_samples) {
  const double independent = rank_coverage(200, 0.0, 400);
  EXPECT_GT(independent, 0.92);
  EXPECT_LT(independent, 0.99);
  EXPECT_GT(rank_coverage(1000, 0.8, 200), 0.87);
  // The plain binomial interval (no widening) on the same dependent series: what the test guards.
  int plain = 0;
  for (int t = 0; t < 200; ++t) {
    std::vector<double> x = normal_series(1000, 10, 1, 0.8, 100 + static_cast<std::uint64_t>(t));
    std::sort(x.begin(), x.end());
    const double h = 1.96 * std::sqrt(1000.0) / 2;
    plain += x[static_cast<std::size_t>(500 - h)] <= 10 && 10 <= x[static_cast<std::size_t>(500 + h)];
  }
  EXPECT_LT(plain / 200.0, 0.75);
}

TEST(rank_interval, normal_quantiles_and_bad_input) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0, 1e-12);
  EXPECT_NEAR(normal_quantile(0.01), -2.326348, 1e-6);
  EXPECT_THROW(normal_quantile(1), error);
  EXPECT_THROW(median_ci_by_ranks(std::vector<double>{1}), error);
  EXPECT_THROW(median_ci_by_ranks(std::vector<double>{1, 2}, 0), error);
  const interval ci = median_ci_by_ranks(std::vector<double>{5, 1, 4, 2, 3});
  EXPECT_LE(ci.low, 3);
  EXPECT_GE(ci.high, 3);
}

TEST(bootstrap, block_length_follows_the_dependence) {
  EXPECT_EQ(automatic_block_length(normal_series(1000, 0, 1, 0, 1)), 10u);  // n^(1/3)
  EXPECT_GT(automatic_block_length(normal_series(1000, 0, 1, 0.95, 1)), 20u);
  EXPECT_LE(automatic_block_length(normal_series(40, 0, 1, 0.99, 1)), 10u) << "capped at n/4";
}

TEST(bootstrap, same_seed_same_interval_and_narrower_with_more_samples) {
  const std::vector<double> x = normal_series(400, 50, 2, 0.3, 9);
  const interval a = median_ci(x), b = median_ci(x);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  const std::vector<double> more = normal_series(6400, 50, 2, 0.3, 9);
  EXPECT_LT(median_ci(more).width_relative_to(50), a.width_relative_to(50) / 2);
}

TEST(bootstrap, ratio_of_medians_contains_the_true_ratio) {
  int hits = 0;
  for (int t = 0; t < 100; ++t) {
    const auto base = normal_series(150, 100, 2, 0.5, 1000 + static_cast<std::uint64_t>(t));
    const auto next = normal_series(150, 90, 2, 0.5, 5000 + static_cast<std::uint64_t>(t));
    const interval r = median_ratio_ci(base, next, {.resamples = 400});
    hits += r.low <= 0.9 && 0.9 <= r.high;
  }
  EXPECT_GT(hits, 85);
  EXPECT_THROW(median_ratio_ci(std::vector<double>{0, 0, 0}, std::vector<double>{1, 2, 3}), error);
  EXPECT_THROW(median_ci(std::vector<double>{1}), error);
  EXPECT_THROW(median_ci(std::vector<double>{1, 2}, {.confidence = 1.5}), error);
}

TEST(mann_whitney, exact_p_values_of_small_series) {
  // Completely separated 3 vs 3: U = 0, P = 2 / C(6, 3) = 0.1.
  rank_test_result r = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.statistic, 0);
  EXPECT_NEAR(r.p_value, 0.1, 1e-12);
  // 5 vs 5 separated: 2 / 252.
  r = mann_whitney_u(std::vector<double>{10, 11, 12, 13, 14}, std::vector<double>{1, 2, 3, 4, 5});
  EXPECT_EQ(r.statistic, 25);
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-12);
  // Interleaved: no evidence at all.
  r = mann_whitney_u(std::vector<double>{1, 4, 5, 8}, std::vector<double>{2, 3, 6, 7});
  EXPECT_EQ(r.statistic, 8);
  EXPECT_NEAR(r.p_value, 1.0, 1e-12);
}

TEST(mann_whitney, ties_use_the_corrected_normal_approximation) {
  const rank_test_result r = mann_whitney_u(std::vector<double>{1, 1, 2, 2, 3}, std::vector<double>{2, 3, 3, 4, 4});
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.statistic, 3);  // pairs a > b: 2 > 2 and 2 > 2 as halves, 3 > 2, 3 = 3 twice as halves
  EXPECT_GT(r.p_value, 0.02);
  EXPECT_LT(r.p_value, 0.2);
  EXPECT_EQ(mann_whitney_u(std::vector<double>{5, 5}, std::vector<double>{5, 5, 5}).p_value, 1);
  EXPECT_THROW(mann_whitney_u(std::vector<double>{}, std::vector<double>{1}), error);
}

// 10 per-repetition medians each, as `opval bench compare` has: same distribution rarely
// flagged at 5%, a one-sigma shift usually.
TEST(mann_whitney, false_alarm_rate_and_power_over_many_trials) {
  int false_alarms = 0, detections = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    const auto a = normal_series(10, 0, 1, 0, 20000 + static_cast<std::uint64_t>(t));
    const auto b = normal_series(10, 0, 1, 0, 30000 + static_cast<std::uint64_t>(t));
    const auto shifted = normal_series(10, 1.5, 1, 0, 40000 + static_cast<std::uint64_t>(t));
    false_alarms += mann_whitney_u(a, b).p_value < 0.05;
    detections += mann_whitney_u(a, shifted).p_value < 0.05;
  }
  EXPECT_LT(false_alarms, trials * 0.08);
  EXPECT_GT(detections, trials * 0.6);
}

TEST(mann_kendall, drift_is_detected_and_a_stationary_series_is_not) {
  std::vector<double> drifting = normal_series(300, 100, 1, 0, 77);
  for (std::size_t i = 0; i < drifting.size(); ++i) drifting[i] += 0.01 * static_cast<double>(i);
  const rank_test_result up = mann_kendall(drifting);
  EXPECT_GT(up.statistic, 0);
  EXPECT_LT(up.p_value, 1e-6);
  int false_alarms = 0;
  for (int t = 0; t < 200; ++t) false_alarms += mann_kendall(normal_series(100, 0, 1, 0, 500 + static_cast<std::uint64_t>(t))).p_value < 0.05;
  EXPECT_LT(false_alarms, 200 * 0.09);
  // Known value: 1 2 3 4 5 has S = 10 and Var = 5*4*15/18.
  const rank_test_result ramp = mann_kendall(std::vector<double>{1, 2, 3, 4, 5});
  EXPECT_EQ(ramp.statistic, 10);
  EXPECT_NEAR(ramp.z, 9 / std::sqrt(300.0 / 18), 1e-12);
  EXPECT_THROW(mann_kendall(std::vector<double>{1, 2}), error);
}

}  // namespace
}  // namespace opval
