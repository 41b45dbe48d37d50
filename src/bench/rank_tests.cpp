#include "bench/rank_tests.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval {
namespace {

double two_sided_normal_p(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

/// Sum over groups of equal values of t^3 - t (t the group's size): the tie correction.
double tie_term(std::vector<double> values, double (*f)(double)) {
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    sum += f(static_cast<double>(j - i));
    i = j;
  }
  return sum;
}

/// P(U <= u) for sizes m, n without ties: the number of arrangements with each U, by the
/// recurrence c(m, n, u) = c(m - 1, n, u - n) + c(m, n - 1, u), over all arrangements.
double exact_u_cdf(std::size_t m, std::size_t n, double u) {
  // counts[j][v]: arrangements of i values of a and j of b with U = v, for the current i.
  const std::size_t max_u = m * n;
  std::vector<std::vector<double>> counts(n + 1, std::vector<double>(max_u + 1, 0.0));
  for (std::size_t j = 0; j <= n; ++j) counts[j][0] = 1;  // i = 0: U = 0
  for (std::size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> next(n + 1, std::vector<double>(max_u + 1, 0.0));
    next[0][0] = 1;
    for (std::size_t j = 1; j <= n; ++j)
      for (std::size_t v = 0; v <= i * j; ++v) {
        // The largest of the i + j values is an a (it beats all j b's) or a b.
        next[j][v] = (v >= j ? counts[j][v - j] : 0.0) + next[j - 1][v];
      }
    counts.swap(next);
  }
  double below = 0, total = 0;
  for (std::size_t v = 0; v <= max_u; ++v) {
    total += counts[n][v];
    if (static_cast<double>(v) <= u + 1e-9) below += counts[n][v];
  }
  return below / total;
}

}  // namespace

rank_test_result mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) throw error("the Mann-Whitney test needs two non-empty series");
  const double m = static_cast<double>(a.size()), n = static_cast<double>(b.size());
  rank_test_result r;
  for (double x : a)
    for (double y : b) r.statistic += x > y ? 1.0 : (x == y ? 0.5 : 0.0);
  std::vector<double> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  const double ties = tie_term(pooled, [](double t) { return t * t * t - t; });
  if (ties == 0 && a.size() <= 25 && b.size() <= 25) {
    const double low = exact_u_cdf(a.size(), b.size(), r.statistic);
    const double high = 1 - exact_u_cdf(a.size(), b.size(), r.statistic - 1);  // P(U >= u)
    r.p_value = std::min(1.0, 2 * std::min(low, high));
    r.exact = true;
    return r;
  }
  const double mean = m * n / 2;
  const double total = m + n;
  const double variance = m * n / 12 * ((total + 1) - ties / (total * (total - 1)));
  if (variance <= 0) return r;  // every value equal: no evidence of a shift
  const double d = r.statistic - mean;
  r.z = (std::fabs(d) <= 0.5 ? 0.0 : d - std::copysign(0.5, d)) / std::sqrt(variance);
  r.p_value = two_sided_normal_p(r.z);
  return r;
}

rank_test_result mann_kendall(std::span<const double> series) {
  if (series.size() < 3) throw error(fmt::format("the Mann-Kendall test needs 3 values or more, got {}", series.size()));
  rank_test_result r;
  for (std::size_t i = 0; i < series.size(); ++i)
    for (std::size_t j = i + 1; j < series.size(); ++j)
      r.statistic += series[j] > series[i] ? 1.0 : (series[j] < series[i] ? -1.0 : 0.0);
  const double n = static_cast<double>(series.size());
  const double ties = tie_term(std::vector<double>(series.begin(), series.end()),
                               [](double t) { return t * (t - 1) * (2 * t + 5); });
  const double variance = (n * (n - 1) * (2 * n + 5) - ties) / 18;
  if (variance <= 0) return r;
  const double s = r.statistic;
  r.z = (s == 0 ? 0.0 : s - std::copysign(1.0, s)) / std::sqrt(variance);
  r.p_value = two_sided_normal_p(r.z);
  return r;
}

}  // namespace opval
