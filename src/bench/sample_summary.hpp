#pragma once
// Summary statistics of a series of timing samples (docs/BENCHMARKING.md): location, spread,
// quantiles and outliers, computed exactly from the sorted samples.
#include <cstddef>
#include <span>
#include <vector>

namespace opval {

struct sample_summary {
  std::size_t n = 0;
  double min = 0, max = 0;
  double mean = 0;
  double stdev = 0;   ///< sample standard deviation (n - 1 in the denominator; 0 for n = 1)
  double median = 0;
  double mad = 0;     ///< median absolute deviation from the median, unscaled (1.4826 mad estimates a normal's sigma)
  double p10 = 0, p90 = 0, p99 = 0;
  double cv = 0;      ///< coefficient of variation, stdev / mean
  /// Samples beyond Tukey's fences, below q1 - 1.5 IQR and above q3 + 1.5 IQR.
  std::size_t outliers_low = 0, outliers_high = 0;
  std::size_t outliers() const { return outliers_low + outliers_high; }
};

/// The q-quantile (0 <= q <= 1) of ascending `sorted` samples, interpolated linearly between
/// order statistics (Hyndman and Fan's type 7, as NumPy's default and R's).
double quantile_of_sorted(std::span<const double> sorted, double q);

/// The median of `values` in any order (quantile_of_sorted's 0.5 of them sorted).
double median_of(std::span<const double> values);

/// The medians of `chunks` consecutive chunks of `samples` (the last one takes the remainder;
/// fewer chunks when there are fewer samples): stand-ins for repeated runs when a series was
/// recorded as one run, and a drift's trace.
std::vector<double> chunk_medians(std::span<const double> samples, std::size_t chunks);

/// The summary of `samples` (any order). Throws opval::error when there are none or one is
/// not finite: a timing that is NaN or infinite is a harness bug, not a sample.
sample_summary summarize(std::span<const double> samples);

}  // namespace opval
