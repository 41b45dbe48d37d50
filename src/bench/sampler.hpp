#pragma once
// Timing a kernel (docs/BENCHMARKING.md): warm-up, batching of short kernels so that the
// timer's resolution and overhead stay under 1% of a sample, then adaptive sampling until the
// 95% confidence interval of the median is narrower than a target or a time budget runs out.
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bench/bootstrap.hpp"
#include "bench/sample_summary.hpp"

namespace opval {

/// The clock the sampler reads (std::chrono::steady_clock), as measured on this machine.
struct timer_properties {
  double resolution = 0;  ///< the smallest step between two readings, seconds
  double overhead = 0;    ///< the cost of one reading, seconds (median of back-to-back pairs)
};
/// Measures the clock (about a millisecond).
timer_properties measure_timer();

struct sampling_options {
  double target_ci = 0.01;        ///< stop when the CI's half-width is within this fraction of the median
  double budget_seconds = 5;      ///< stop when warm-up and sampling have taken this long
  std::size_t min_samples = 30;   ///< never stop (for the target) before this many samples
  /// Nor before sampling this long: a figure from a few milliseconds of samples is a snapshot
  /// of the machine's load at that instant (see docs/BENCHMARKING.md, "Accuracy").
  double min_sampling_seconds = 0.5;
  std::size_t max_samples = 1000000;
  double warmup_seconds = 0.05;   ///< run the kernel at least this long, and at least once, first
  /// A sample lasts at least this long: shorter kernels are batched. 0 = automatic: 100 times
  /// the timer's resolution plus overhead (1% of a sample), at least 10 microseconds, and at
  /// least a thousandth of min_sampling_seconds (500 us by default), so that the minimum time
  /// holds about 1000 samples, where the block bootstrap's interval is cheap (~20 ms).
  double min_sample_seconds = 0;
  bootstrap_options ci;           ///< the interval's confidence, resamples and seed
};

struct sampling_result {
  std::vector<double> samples;    ///< seconds per kernel call, one per sample, in order
  std::size_t batch = 1;          ///< kernel calls per sample
  sample_summary summary;
  /// The 95% interval of the median: the block bootstrap (interval::block > 0), or beyond 10000
  /// samples the order-statistic interval (block 0; rank_interval.hpp), which costs O(n) once.
  interval median_ci;
  bool converged = false;         ///< the CI target was met
  std::string stop_reason;        ///< "CI +-0.8% <= +-1%", "time budget of 5 s spent", ...
  double warmup_seconds = 0, sampling_seconds = 0;
  double rule_seconds = 0;        ///< of sampling_seconds, the stopping rule's share (between samples)
  timer_properties timer;
  /// Why the figure may not be trusted (noise_warnings, and a clock frequency that changed
  /// during the sampling, when readable); empty when nothing was seen.
  std::vector<std::string> warnings;
  /// With repetitions (sample_repeated): each one's median, in order; empty for one run.
  std::vector<double> repetition_medians;
};

/// Warnings about a series of samples, in order: a coefficient of variation above 5%; more
/// than 5% of the samples beyond Tukey's fences; a trend across the run (the Mann-Kendall test
/// on the medians of 10 consecutive chunks, p < 0.01), which a drifting clock, thermal
/// throttling or growing load leaves.
std::vector<std::string> noise_warnings(std::span<const double> samples);


/// Times `kernel` (one call does the work once). `between`, when set, runs before every sample
/// and is not timed: rotating input buffers or flushing the caches (cold-cache mode). Throws
/// opval::error on bad options; an exception from the kernel propagates.
sampling_result sample(const std::function<void()>& kernel, const std::function<void()>& between,
                       const sampling_options& o = {});

/// `repetitions` independent runs of sample() (each with its own warm-up, batch calibration and
/// stopping rule), pooled: the samples in order, the summary and the interval over all of
/// them, each run's median in repetition_medians, every run's warnings, and a warning for each
/// run whose median lies more than 5% from the pooled one (the figure then depends on when it
/// was taken). Converged when every run met the target. One repetition is sample() itself.
sampling_result sample_repeated(const std::function<void()>& kernel, const std::function<void()>& between,
                                const sampling_options& o, int repetitions);

}  // namespace opval
