#include "bench/sample_summary.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval {

double quantile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw error("the quantile of no samples");
  if (!(q >= 0 && q <= 1)) throw error(fmt::format("quantile {} is outside [0, 1]", q));
  const double h = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double median_of(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::ranges::sort(sorted);
  return quantile_of_sorted(sorted, 0.5);
}

std::vector<double> chunk_medians(std::span<const double> samples, std::size_t chunks) {
  const std::size_t count = std::clamp<std::size_t>(chunks, 1, samples.size());
  const std::size_t size = samples.size() / count;
  std::vector<double> out;
  for (std::size_t c = 0; c < count; ++c) {
    const std::size_t begin = c * size, end = c + 1 == count ? samples.size() : begin + size;
    out.push_back(summarize(samples.subspan(begin, end - begin)).median);
  }
  return out;
}

sample_summary summarize(std::span<const double> samples) {
  if (samples.empty()) throw error("no samples to summarize");
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (!std::isfinite(samples[i])) throw error(fmt::format("sample {} is {}: not a timing", i, samples[i]));
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  sample_summary s;
  s.n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  // Mean and variance by Welford's update: no cancellation when the samples are large and close.
  double mean = 0, m2 = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const double d = sorted[i] - mean;
    mean += d / static_cast<double>(i + 1);
    m2 += d * (sorted[i] - mean);
  }
  s.mean = mean;
  s.stdev = s.n > 1 ? std::sqrt(m2 / static_cast<double>(s.n - 1)) : 0.0;
  s.cv = s.mean != 0 ? s.stdev / std::fabs(s.mean) : 0.0;
  s.median = quantile_of_sorted(sorted, 0.5);
  s.p10 = quantile_of_sorted(sorted, 0.10);
  s.p90 = quantile_of_sorted(sorted, 0.90);
  s.p99 = quantile_of_sorted(sorted, 0.99);
  std::vector<double> deviations(sorted.size());
  std::transform(sorted.begin(), sorted.end(), deviations.begin(), [&](double x) { return std::fabs(x - s.median); });
  std::sort(deviations.begin(), deviations.end());
  s.mad = quantile_of_sorted(deviations, 0.5);
  const double q1 = quantile_of_sorted(sorted, 0.25), q3 = quantile_of_sorted(sorted, 0.75);
  const double fence = 1.5 * (q3 - q1);
  s.outliers_low = static_cast<std::size_t>(std::count_if(sorted.begin(), sorted.end(), [&](double x) { return x < q1 - fence; }));
  s.outliers_high = static_cast<std::size_t>(std::count_if(sorted.begin(), sorted.end(), [&](double x) { return x > q3 + fence; }));
  return s;
}

}  // namespace opval
