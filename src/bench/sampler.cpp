#include "bench/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "bench/environment.hpp"
#include "opval/error.hpp"
#include "bench/rank_interval.hpp"
#include "bench/rank_tests.hpp"
#include "core/profiler_ranges.hpp"

namespace opval {
namespace {

using steady = std::chrono::steady_clock;

double seconds(steady::duration d) { return std::chrono::duration<double>(d).count(); }

void check(const sampling_options& o) {
  if (!(o.target_ci > 0)) throw error(fmt::format("the CI target must be positive, got {}", o.target_ci));
  if (!(o.budget_seconds > 0)) throw error(fmt::format("the time budget must be positive, got {} s", o.budget_seconds));
  if (o.min_samples < 2 || o.max_samples < o.min_samples)
    throw error(fmt::format("need 2 <= min samples ({}) <= max samples ({})", o.min_samples, o.max_samples));
  if (o.warmup_seconds < 0 || o.min_sample_seconds < 0 || o.min_sampling_seconds < 0)
    throw error("negative warm-up, sample or sampling time");
}

/// Calls per sample: grown geometrically until a batch lasts `min_sample`, each size timed
/// twice and the shorter kept, so that a preemption during one timing does not stop the growth
/// early (as Google Benchmark grows its iteration count).
std::size_t calibrate_batch(const std::function<void()>& kernel, double min_sample) {
  std::size_t batch = 1;
  for (;;) {
    double shortest = 1e300;
    for (int repeat = 0; repeat < 2; ++repeat) {
      const auto t0 = steady::now();
      for (std::size_t i = 0; i < batch; ++i) kernel();
      shortest = std::min(shortest, seconds(steady::now() - t0));
    }
    if (shortest >= min_sample || batch >= (std::size_t{1} << 30)) return batch;
    const double grow = shortest > 0 ? std::clamp(1.2 * min_sample / shortest, 1.5, 10.0) : 10.0;
    batch = static_cast<std::size_t>(std::ceil(static_cast<double>(batch) * grow));
  }
}

/// Runs a step that is not the kernel's inside the measured region, with the profilers'
/// collection off; returns what the step returns.
template <class F>
auto run_unmeasured(F&& step) {
  const detail::unmeasured_step off;
  return step();
}

/// The sample count at which the stopping rule is evaluated next: every 12.5% more samples, so
/// that its O(n) cost stays a few nanoseconds per sample.
std::size_t next_check(std::size_t n) { return std::max(n + 1, n + n / 8); }

/// Beyond this many samples the block bootstrap (O(n) per resample, 2000 resamples: 0.2 s at
/// this size here) gives way to the order-statistic interval, O(n) once, whose coverage with
/// dependent samples is tested as the bootstrap's is (tests/cpp/test_statistics.cpp).
constexpr std::size_t bootstrap_limit = 10000;

/// The interval of the median the sampler reports and confirms its stop with.
interval median_interval(std::span<const double> samples, const bootstrap_options& o) {
  return samples.size() <= bootstrap_limit ? median_ci(samples, o) : median_ci_by_ranks(samples, o.confidence);
}

/// The stopping rule: the order-statistic interval (O(n)) within the target, then the block
/// bootstrap (O(n) per resample, 200 resamples) confirming it, up to bootstrap_limit samples. After a bootstrap that disagrees,
/// the next waits for 50% more samples (`confirm_at`), so that it too stays a small share.
bool meets_target(std::span<const double> samples, double target, const bootstrap_options& quick,
                  std::size_t& confirm_at) {
  std::vector<double> copy(samples.begin(), samples.end());
  std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(copy.size() / 2), copy.end());
  const double median = copy[copy.size() / 2];  // the upper middle: a stopping rule's centre
  if (median_ci_by_ranks(samples, quick.confidence).width_relative_to(median) > target) return false;
  if (samples.size() < confirm_at) return false;
  confirm_at = std::max(samples.size() + 1, samples.size() + samples.size() / 2);
  return median_interval(samples, quick).width_relative_to(median) <= target;
}

}  // namespace

std::vector<std::string> noise_warnings(std::span<const double> samples) {
  std::vector<std::string> out;
  if (samples.size() < 2) return out;
  const sample_summary s = summarize(samples);
  if (s.cv > 0.05)
    out.push_back(fmt::format("high variation: CV {:.1f}% (the median resists it; the mean and the interval's width do not)",
                              100 * s.cv));
  if (static_cast<double>(s.outliers()) > 0.05 * static_cast<double>(s.n))
    out.push_back(fmt::format("{} of {} samples are outliers ({} high, {} low)", s.outliers(), s.n, s.outliers_high,
                              s.outliers_low));
  if (samples.size() >= 30) {
    const std::vector<double> chunks = chunk_medians(samples, 10);
    const rank_test_result trend = mann_kendall(chunks);
    if (trend.p_value < 0.01)
      out.push_back(fmt::format("a trend across the run: the medians of consecutive tenths {} from {} to {} "
                                "(Mann-Kendall p = {:.2g})",
                                trend.statistic > 0 ? "rise" : "fall", chunks.front(), chunks.back(), trend.p_value));
  }
  return out;
}

timer_properties measure_timer() {
  timer_properties t;
  // Resolution: the smallest non-zero step seen between successive readings.
  double smallest = 1;
  for (int i = 0; i < 1000; ++i) {
    const auto a = steady::now();
    auto b = steady::now();
    while (b == a) b = steady::now();
    smallest = std::min(smallest, seconds(b - a));
  }
  t.resolution = smallest;
  // Overhead: the median cost of one reading, from runs of 1000 back-to-back readings.
  std::vector<double> per_reading;
  for (int run = 0; run < 21; ++run) {
    const auto start = steady::now();
    steady::time_point last = start;
    for (int i = 0; i < 1000; ++i) last = steady::now();
    per_reading.push_back(seconds(last - start) / 1000);
  }
  std::nth_element(per_reading.begin(), per_reading.begin() + 10, per_reading.end());
  t.overhead = per_reading[10];
  return t;
}

sampling_result sample(const std::function<void()>& kernel, const std::function<void()>& between,
                       const sampling_options& o) {
  check(o);
  sampling_result r;
  r.timer = measure_timer();
  // From the warm-up to the last sample, the profilers collect only while the kernel runs:
  // what runs between samples and the stopping rule are unmeasured steps, as they are untimed.
  std::optional<detail::measured_region> measured(std::in_place);
  const auto start = steady::now();
  const double budget = o.budget_seconds;
  // Warm-up: at least one call and warmup_seconds (caches, page faults, frequency ramp-up).
  steady::time_point now;
  do {
    if (between) run_unmeasured(between);
    kernel();
    now = steady::now();
  } while (seconds(now - start) < o.warmup_seconds && seconds(now - start) < budget);
  const double min_sample = o.min_sample_seconds > 0 ? o.min_sample_seconds
                                                     : std::max({10e-6, 100 * (r.timer.resolution + r.timer.overhead),
                                                                 o.min_sampling_seconds / 1000});
  r.batch = calibrate_batch(kernel, min_sample);
  r.warmup_seconds = seconds(steady::now() - start);

  const double mhz_before = run_unmeasured(current_cpu_mhz);
  const auto sampling_start = steady::now();
  bootstrap_options quick = o.ci;
  quick.resamples = std::min(quick.resamples, 200);  // the stopping rule's confirmation; the final interval uses o.ci
  std::size_t check_at = o.min_samples, confirm_at = o.min_samples;
  r.samples.reserve(std::min<std::size_t>(o.max_samples, 4096));
  // One clock reading per sample: a sample ends where the next begins, so the loop's own
  // bookkeeping (a few nanoseconds) falls inside the next sample rather than being read twice.
  // Whatever runs between samples untimed (`between`, the stopping rule) restarts the clock.
  auto t0 = steady::now();
  for (;;) {
    if (between) {
      run_unmeasured(between);
      t0 = steady::now();
    }
    for (std::size_t i = 0; i < r.batch; ++i) kernel();
    const auto t1 = steady::now();
    r.samples.push_back(seconds(t1 - t0) / static_cast<double>(r.batch));
    t0 = t1;
    const std::size_t n = r.samples.size();
    if (n >= o.max_samples) {
      r.stop_reason = fmt::format("the maximum of {} samples reached", o.max_samples);
      break;
    }
    if (n >= check_at && seconds(t1 - sampling_start) >= o.min_sampling_seconds) {
      const auto rule_start = steady::now();
      check_at = next_check(n);
      run_unmeasured([&] { r.converged = meets_target(r.samples, o.target_ci, quick, confirm_at); });
      t0 = steady::now();
      r.rule_seconds += seconds(t0 - rule_start);
      if (r.converged) break;
    }
    if (seconds(t1 - start) >= budget) {
      r.stop_reason = fmt::format("the time budget of {:g} s spent", budget);
      break;
    }
  }
  r.sampling_seconds = seconds(steady::now() - sampling_start);
  measured.reset();
  const double mhz_after = current_cpu_mhz();
  r.summary = summarize(r.samples);
  r.median_ci = r.samples.size() >= 2 ? median_interval(r.samples, o.ci) : interval{r.summary.median, r.summary.median, o.ci.confidence, 1};
  r.warnings = noise_warnings(r.samples);
  if (mhz_before > 0 && mhz_after > 0 && std::fabs(mhz_after / mhz_before - 1) > 0.05)
    r.warnings.push_back(fmt::format("the clock changed during the sampling: {:.0f} MHz before, {:.0f} MHz after",
                                     mhz_before, mhz_after));
  const double half_width = r.median_ci.width_relative_to(r.summary.median);
  if (r.converged) r.stop_reason = fmt::format("CI +-{:.2g}% <= +-{:.2g}%", 100 * half_width, 100 * o.target_ci);
  else r.stop_reason += fmt::format(" (CI +-{:.2g}%, target +-{:.2g}%)", 100 * half_width, 100 * o.target_ci);
  return r;
}

sampling_result sample_repeated(const std::function<void()>& kernel, const std::function<void()>& between,
                                const sampling_options& o, int repetitions) {
  if (repetitions < 1) throw error(fmt::format("repetitions must be 1 or more, got {}", repetitions));
  if (repetitions == 1) return sample(kernel, between, o);
  sampling_result pooled;
  pooled.converged = true;
  std::set<std::string> seen;
  for (int rep = 0; rep < repetitions; ++rep) {
    sampling_result r = sample(kernel, between, o);
    pooled.samples.insert(pooled.samples.end(), r.samples.begin(), r.samples.end());
    pooled.repetition_medians.push_back(r.summary.median);
    pooled.batch = std::max(pooled.batch, r.batch);
    pooled.converged = pooled.converged && r.converged;
    pooled.warmup_seconds += r.warmup_seconds;
    pooled.sampling_seconds += r.sampling_seconds;
    pooled.rule_seconds += r.rule_seconds;
    pooled.timer = r.timer;
    for (std::string& w : r.warnings)
      if (seen.insert(w).second) pooled.warnings.push_back(fmt::format("repetition {}: {}", rep + 1, w));
  }
  pooled.summary = summarize(pooled.samples);
  pooled.median_ci = median_interval(pooled.samples, o.ci);
  for (std::size_t rep = 0; rep < pooled.repetition_medians.size(); ++rep)
    if (const double off = pooled.repetition_medians[rep] / pooled.summary.median - 1; std::fabs(off) > 0.05)
      pooled.warnings.push_back(fmt::format("repetition {}'s median is {:+.1f}% off the pooled median: the figure "
                                            "depends on when it was taken",
                                            rep + 1, 100 * off));
  const double half_width = pooled.median_ci.width_relative_to(pooled.summary.median);
  pooled.stop_reason = fmt::format("{} repetitions{}, pooled CI +-{:.2g}%", repetitions,
                                   pooled.converged ? " each within the target" : ", not all within the target",
                                   100 * half_width);
  return pooled;
}

}  // namespace opval
