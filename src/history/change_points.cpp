// Change-point detection by binary segmentation (history/change_points.hpp).
#include "history/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "bench/rank_tests.hpp"
#include "bench/sample_summary.hpp"

namespace opval {
namespace {

double level_ratio(double before, double after) {
  if (before != 0) return after / before;
  return after == 0 ? 1 : INFINITY;
}

// The best split of series[lo, hi): the smallest p-value, then the largest shift.
std::optional<change_point> best_split(std::span<const double> series, std::size_t lo, std::size_t hi,
                                       const change_point_options& o) {
  if (hi - lo < 2 * o.min_segment) return std::nullopt;
  const std::size_t tried = hi - lo - 2 * o.min_segment + 1;
  std::optional<change_point> best;
  for (std::size_t k = lo + o.min_segment; k + o.min_segment <= hi; ++k) {
    const std::span<const double> left = series.subspan(lo, k - lo), right = series.subspan(k, hi - k);
    const rank_test_result t = mann_whitney_u(left, right);
    change_point c{k, median_of(left), median_of(right), 1, std::min(1.0, t.p_value * static_cast<double>(tried))};
    c.ratio = level_ratio(c.before, c.after);
    const auto shift = [](const change_point& p) { return std::abs(std::log(p.ratio)); };
    if (!best || c.p_value < best->p_value || (c.p_value == best->p_value && shift(c) > shift(*best))) best = c;
  }
  return best;
}

void segment(std::span<const double> series, std::size_t lo, std::size_t hi, const change_point_options& o,
             std::vector<change_point>& out) {
  const std::optional<change_point> c = best_split(series, lo, hi, o);
  if (!c || c->p_value >= o.alpha || std::abs(c->ratio - 1) < o.threshold) return;
  segment(series, lo, c->index, o, out);
  out.push_back(*c);
  segment(series, c->index, hi, o, out);
}

}  // namespace

std::vector<change_point> find_change_points(std::span<const double> series, const change_point_options& o) {
  std::vector<change_point> out;
  segment(series, 0, series.size(), o, out);
  // Each change's levels are those of the final segments beside it, not of the wider segment
  // it was found in (which may hold other changes).
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t lo = i == 0 ? 0 : out[i - 1].index, hi = i + 1 == out.size() ? series.size() : out[i + 1].index;
    out[i].before = median_of(series.subspan(lo, out[i].index - lo));
    out[i].after = median_of(series.subspan(out[i].index, hi - out[i].index));
    out[i].ratio = level_ratio(out[i].before, out[i].after);
  }
  return out;
}

}  // namespace opval
