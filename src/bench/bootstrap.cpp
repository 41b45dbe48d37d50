#include "bench/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "core/rng.hpp"
#include "bench/sample_summary.hpp"

namespace opval {
namespace {

void check(std::span<const double> samples, const bootstrap_options& o) {
  if (samples.size() < 2) throw error(fmt::format("a bootstrap interval needs 2 samples or more, got {}", samples.size()));
  if (!(o.confidence > 0 && o.confidence < 1)) throw error(fmt::format("confidence {} is outside (0, 1)", o.confidence));
  if (o.resamples < 100) throw error(fmt::format("{} bootstrap resamples are too few (100 at least)", o.resamples));
}

double median_of(std::vector<double>& v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2) return upper;
  return 0.5 * (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper);
}

/// The median of one moving-block resample of `samples`: blocks of `block` consecutive
/// samples starting anywhere in [0, n - block], concatenated and cut to n. `stream` numbers
/// the resample, so each is a fixed function of the seed.
double resampled_median(std::span<const double> samples, std::size_t block, std::uint64_t seed, std::uint64_t stream,
                        std::vector<double>& scratch) {
  const std::size_t n = samples.size();
  const std::size_t starts = n - block + 1;
  scratch.clear();
  for (std::uint64_t k = 0; scratch.size() < n; ++k) {
    const auto start = std::min(starts - 1, static_cast<std::size_t>(random_uniform(seed, stream, k) * static_cast<double>(starts)));
    for (std::size_t i = 0; i < block && scratch.size() < n; ++i) scratch.push_back(samples[start + i]);
  }
  return median_of(scratch);
}

/// The percentile interval of `statistic(r)` over the resamples r = 0 .. o.resamples - 1.
interval percentile_interval(const bootstrap_options& o, std::size_t block, const std::function<double(std::uint64_t)>& statistic) {
  std::vector<double> values(static_cast<std::size_t>(o.resamples));
  for (std::size_t r = 0; r < values.size(); ++r) values[r] = statistic(r);
  std::sort(values.begin(), values.end());
  const double tail = (1 - o.confidence) / 2;
  return {quantile_of_sorted(values, tail), quantile_of_sorted(values, 1 - tail), o.confidence, block};
}

std::size_t block_length(std::span<const double> samples, const bootstrap_options& o) {
  return std::clamp<std::size_t>(o.block ? o.block : automatic_block_length(samples), 1, samples.size());
}

}  // namespace

std::size_t automatic_block_length(std::span<const double> samples) {
  const std::size_t n = samples.size();
  if (n < 4) return 1;
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(n);
  double c0 = 0;
  for (double x : samples) c0 += (x - mean) * (x - mean);
  std::size_t lag = 0;  // the last lag whose autocorrelation is significant
  if (c0 > 0) {
    const double significant = 2.0 / std::sqrt(static_cast<double>(n));
    for (std::size_t k = 1; k < n / 2; ++k) {
      double ck = 0;
      for (std::size_t i = 0; i + k < n; ++i) ck += (samples[i] - mean) * (samples[i + k] - mean);
      if (std::fabs(ck / c0) < significant) break;
      lag = k;
    }
  }
  const auto cube_root = static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(n))));
  return std::clamp<std::size_t>(std::max(cube_root, 2 * lag), 1, std::max<std::size_t>(1, n / 4));
}

interval median_ci(std::span<const double> samples, const bootstrap_options& o) {
  check(samples, o);
  const std::size_t block = block_length(samples, o);
  std::vector<double> scratch;
  return percentile_interval(o, block, [&](std::uint64_t r) { return resampled_median(samples, block, o.seed, r, scratch); });
}

interval median_ratio_ci(std::span<const double> base, std::span<const double> next, const bootstrap_options& o) {
  check(base, o);
  check(next, o);
  const std::size_t block_base = block_length(base, o), block_next = block_length(next, o);
  std::vector<double> scratch;
  // The two series draw from different streams of the seed: independent resamples.
  const std::uint64_t next_streams = 1ull << 40;
  return percentile_interval(o, std::max(block_base, block_next), [&](std::uint64_t r) {
    const double b = resampled_median(base, block_base, o.seed, r, scratch);
    if (b == 0) throw error("a ratio of medians whose base median can be 0");
    return resampled_median(next, block_next, o.seed, next_streams + r, scratch) / b;
  });
}

}  // namespace opval
