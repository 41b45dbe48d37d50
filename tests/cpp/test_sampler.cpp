// The sampler on kernels of known length (busy-waits on the same clock): the median is the
// kernel's length, short kernels are batched, the CI target stops a steady kernel, the budget
// stops a noisy one, the untimed step between samples stays out of the figures. The accuracy
// figures themselves (within 2%) are bench/'s, on a quiet machine; here the tolerance allows
// for a shared one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "opval/error.hpp"
#include "core/rng.hpp"
#include "bench/sampler.hpp"
#include "timing_testing.hpp"

namespace opval {
namespace {

using steady = std::chrono::steady_clock;

void spin_for(double seconds) {
  const auto end = steady::now() + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(seconds));
  while (steady::now() < end) {
  }
}

TEST(sampler, the_clock_is_measured) {
  const timer_properties t = measure_timer();
  EXPECT_GT(t.resolution, 0);
  EXPECT_LT(t.resolution, 1e-6);
  EXPECT_GT(t.overhead, 0);
  EXPECT_LT(t.overhead, 1e-6);
}

// A spin of `length` lasts `length` plus the clock reading that ends it (and its loop).
TEST(sampler, the_median_of_a_known_kernel_is_its_length) {
  for (double length : {1e-6, 10e-6, 1e-3}) {
    opval::testing::expect_on_some_try(3, [&]() -> std::string {
      sampling_options o;
      o.budget_seconds = 1;
      const sampling_result r = sample([&] { spin_for(length); }, {}, o);
      EXPECT_GE(r.samples.size(), o.min_samples);
      EXPECT_LE(r.median_ci.low, r.summary.median);
      EXPECT_GE(r.median_ci.high, r.summary.median);
      const double overshoot = 3 * r.timer.overhead;
      if (r.summary.median >= length * 0.99 && r.summary.median <= length * 1.05 + overshoot) return "";
      return "length " + std::to_string(length) + " s: median " + std::to_string(r.summary.median) + " s (" +
             r.stop_reason + ")";
    });
  }
}

// The target stops nothing before min_samples and min_sampling_seconds, whose thousandth is the
// shortest sample; the stopping rule's own time is accounted apart and is a small share.
TEST(sampler, the_minimum_time_holds_the_stop_and_the_rule_is_cheap) {
  sampling_options o;
  o.budget_seconds = 2;
  o.min_sampling_seconds = 0.3;
  const sampling_result r = sample([] { spin_for(20e-6); }, {}, o);
  EXPECT_TRUE(r.converged) << r.stop_reason;
  EXPECT_GE(r.sampling_seconds, 0.3);
  // Samples of at least a thousandth of the minimum time (0.3 ms: batches of 15 calls or more).
  EXPECT_GE(static_cast<double>(r.batch) * 20e-6, 0.3e-3 * 0.9) << r.batch;
  EXPECT_GE(r.samples.size(), o.min_samples);
  EXPECT_GT(r.rule_seconds, 0);
  EXPECT_LT(r.rule_seconds, 0.1 * r.sampling_seconds);
  o.min_sampling_seconds = 0;
  o.min_samples = 40;
  const sampling_result quick = sample([] { spin_for(20e-6); }, {}, o);
  EXPECT_GE(quick.samples.size(), 40u);
  EXPECT_LT(quick.sampling_seconds, 0.3) << quick.stop_reason;
  EXPECT_THROW(sample([] {}, {}, {.min_sampling_seconds = -1}), error);
}

// Repetitions pool their samples and keep each median; a kernel that doubles its length 0.2 s
// into the run (each repetition capped at 0.15 s) leaves repetitions far from the pooled
// median, and each such is warned of.
TEST(sampler, repetitions_are_pooled_and_a_median_far_from_the_pool_is_warned_of) {
  sampling_options o;
  o.budget_seconds = 0.15;
  o.warmup_seconds = 0.01;
  const sampling_result steady_run = sample_repeated([] { spin_for(20e-6); }, {}, o, 3);
  ASSERT_EQ(steady_run.repetition_medians.size(), 3u);
  EXPECT_EQ(steady_run.stop_reason.rfind("3 repetitions", 0), 0u) << steady_run.stop_reason;
  for (double m : steady_run.repetition_medians) EXPECT_NEAR(m / steady_run.summary.median, 1, 0.05);
  const auto start = steady::now();
  const sampling_result drifting = sample_repeated(
      [&] { spin_for(steady::now() - start < std::chrono::milliseconds(200) ? 20e-6 : 40e-6); }, {}, o, 3);
  ASSERT_EQ(drifting.repetition_medians.size(), 3u);
  EXPECT_GT(drifting.repetition_medians.back() / drifting.repetition_medians.front(), 1.5);
  const auto warned = std::count_if(drifting.warnings.begin(), drifting.warnings.end(), [](const std::string& w) {
    return w.find("off the pooled median") != std::string::npos;
  });
  EXPECT_GE(warned, 1) << ::testing::PrintToString(drifting.warnings);
  EXPECT_EQ(sample_repeated([] {}, {}, o, 1).repetition_medians.size(), 0u) << "one run is sample() itself";
  EXPECT_THROW(sample_repeated([] {}, {}, o, 0), error);
}

TEST(sampler, short_kernels_are_batched_to_ten_microseconds_or_more) {
  sampling_options o;
  o.budget_seconds = 0.5;
  const sampling_result short_one = sample([] { spin_for(1e-6); }, {}, o);
  EXPECT_GE(short_one.batch, 8u);
  EXPECT_GE(short_one.batch * short_one.summary.median, 8e-6);
  const sampling_result long_one = sample([] { spin_for(1e-3); }, {}, o);
  EXPECT_EQ(long_one.batch, 1u);
}

TEST(sampler, a_steady_kernel_meets_the_target_and_a_noisy_one_runs_out_of_budget) {
  sampling_options o;
  o.budget_seconds = 2;
  const sampling_result steady_run = sample([] { spin_for(20e-6); }, {}, o);
  EXPECT_TRUE(steady_run.converged) << steady_run.stop_reason;
  EXPECT_EQ(steady_run.stop_reason.rfind("CI +-", 0), 0u) << steady_run.stop_reason;
  EXPECT_LE(steady_run.median_ci.width_relative_to(steady_run.summary.median), 0.011);

  // Lengths spread uniformly over 50..550 us: a +-0.1% interval needs far more than 0.2 s.
  std::uint64_t call = 0;
  o.budget_seconds = 0.2;
  o.target_ci = 0.001;
  const sampling_result noisy = sample([&] { spin_for(50e-6 + 500e-6 * random_uniform(3, 0, call++)); }, {}, o);
  EXPECT_FALSE(noisy.converged);
  EXPECT_NE(noisy.stop_reason.find("time budget of 0.2 s spent"), std::string::npos) << noisy.stop_reason;
  EXPECT_LT(noisy.warmup_seconds + noisy.sampling_seconds, 0.5);
}

TEST(sampler, the_step_between_samples_is_run_once_per_sample_and_not_timed) {
  std::size_t betweens = 0;
  sampling_options o;
  o.budget_seconds = 0.5;
  o.min_sample_seconds = 1e-9;  // no batching: one call per sample
  const sampling_result r = sample([] { spin_for(20e-6); }, [&] { ++betweens; spin_for(200e-6); }, o);
  EXPECT_EQ(r.batch, 1u);
  EXPECT_NEAR(r.summary.median / 20e-6, 1.0, 0.2);
  const std::size_t warm_calls_at_most = static_cast<std::size_t>(o.warmup_seconds / 220e-6) + 2;
  EXPECT_GE(betweens, r.samples.size());
  EXPECT_LE(betweens, r.samples.size() + warm_calls_at_most);
}

TEST(sampler, noise_warnings_name_spread_outliers_and_drift) {
  std::vector<double> steady_series, spread, drifting, outlying;
  for (std::size_t i = 0; i < 200; ++i) {
    const double jitter = 0.002 * random_normal(5, 0, i);
    steady_series.push_back(1e-5 * (1 + jitter));
    spread.push_back(1e-5 * (1 + 0.3 * std::fabs(random_normal(5, 1, i))));
    drifting.push_back(1e-5 * (1 + jitter + 0.0002 * static_cast<double>(i)));
    outlying.push_back(1e-5 * (1 + jitter) * (i % 10 == 0 ? 3 : 1));
  }
  EXPECT_TRUE(noise_warnings(steady_series).empty());
  const auto has = [](const std::vector<std::string>& w, const std::string& start) {
    return std::any_of(w.begin(), w.end(), [&](const std::string& s) { return s.starts_with(start); });
  };
  EXPECT_TRUE(has(noise_warnings(spread), "high variation: CV "));
  EXPECT_TRUE(has(noise_warnings(drifting), "a trend across the run: the medians of consecutive tenths rise"));
  EXPECT_TRUE(has(noise_warnings(outlying), "20 of 200 samples are outliers (20 high, 0 low)"));
}

// A kernel that slows down as it runs (as under throttling) is flagged.
TEST(sampler, a_kernel_slowing_down_over_the_run_is_warned_of) {
  std::size_t calls = 0;
  sampling_options o;
  o.budget_seconds = 0.3;
  o.target_ci = 1e-6;  // never met: sample for the whole budget
  o.min_sample_seconds = 1e-9;
  const sampling_result r = sample([&] { spin_for(20e-6 + 2e-9 * static_cast<double>(calls++)); }, {}, o);
  EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(),
                          [](const std::string& w) { return w.starts_with("a trend across the run"); }))
      << r.samples.size() << " samples";
}

TEST(sampler, bad_options_are_errors_and_kernel_exceptions_propagate) {
  auto run = [](sampling_options o) { return sample([] {}, {}, o); };
  EXPECT_THROW(run({.target_ci = 0}), error);
  EXPECT_THROW(run({.budget_seconds = -1}), error);
  EXPECT_THROW(run({.min_samples = 1}), error);
  EXPECT_THROW(run({.min_samples = 10, .max_samples = 5}), error);
  EXPECT_THROW(sample([] { throw std::runtime_error("kernel failed"); }, {}, {}), std::runtime_error);
}

}  // namespace
}  // namespace opval
