#include "bench/rank_interval.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval {
namespace {

/// Dependence longer than this many samples is left to the bootstrap, which confirms every stop.
constexpr std::size_t max_lag = 64;

}  // namespace

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw error(fmt::format("a normal quantile needs p in (0, 1), got {}", p));
  // Bisection on the normal CDF, 0.5 erfc(-x / sqrt 2): exact to double precision in 100 steps.
  double low = -40, high = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (low + high);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

interval median_ci_by_ranks(std::span<const double> samples, double confidence) {
  const std::size_t n = samples.size();
  if (n < 2) throw error(fmt::format("an interval of the median needs 2 samples or more, got {}", n));
  if (!(confidence > 0 && confidence < 1)) throw error(fmt::format("confidence {} is outside (0, 1)", confidence));
  std::vector<double> sorted(samples.begin(), samples.end());
  const auto at = [&](std::size_t rank) {
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
    return sorted[rank];
  };
  const double median = at(n / 2);
  // The integrated autocorrelation of the signs of x - median (their mean is about 0 by
  // construction), summed over the lags up to the first that is not significant (2 / sqrt n).
  std::vector<double> signs(n);
  double all = 0;
  for (std::size_t i = 0; i < n; ++i) {
    signs[i] = samples[i] > median ? 1.0 : samples[i] < median ? -1.0 : 0.0;
    all += signs[i] * signs[i];
  }
  double tau = 1;
  const double significant = 2 / std::sqrt(static_cast<double>(n));
  for (std::size_t lag = 1; all > 0 && lag <= std::min<std::size_t>(n / 4, max_lag); ++lag) {
    double same = 0;
    for (std::size_t i = 0; i + lag < n; ++i) same += signs[i] * signs[i + lag];
    if (same / all < significant) break;
    tau += 2 * same / all;
  }
  const double half = normal_quantile(0.5 + confidence / 2) * std::sqrt(static_cast<double>(n) * tau) / 2;
  const double centre = static_cast<double>(n) / 2;
  const auto rank = [&](double x) {
    return static_cast<std::size_t>(std::clamp(x, 0.0, static_cast<double>(n - 1)));
  };
  return {at(rank(std::floor(centre - half))), at(rank(std::ceil(centre + half))), confidence, 0};
}

}  // namespace opval
