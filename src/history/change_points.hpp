#pragma once
// Change points in a series of measurements over runs (a case's median latency per run, a
// tier's wall time): where the level of the series shifts, found by binary segmentation with a
// rank test, so that one slow outlier is not a change and a step that persists is.
#include <cstddef>
#include <span>
#include <vector>

namespace opval {

struct change_point_options {
  std::size_t min_segment = 3;  ///< runs on each side of a change, at least
  double alpha = 0.05;          ///< family-wise: the test's p-value times the splits tried
  double threshold = 0.05;      ///< a shift of the medians smaller than this fraction is no change
};

struct change_point {
  std::size_t index = 0;      ///< the first value after the change
  double before = 0, after = 0;  ///< the medians of the segments on each side
  double ratio = 1;           ///< after / before
  double p_value = 1;         ///< Mann-Whitney's, times the splits tried (Bonferroni)
};

/// The change points of `series`, in order: the split of a segment whose two sides a
/// Mann-Whitney U test tells apart best is a change when its corrected p-value is below alpha
/// and the medians differ by the threshold; each side is then searched again. A segment
/// shorter than 2 * min_segment is not split, so a series needs that many values to show one.
std::vector<change_point> find_change_points(std::span<const double> series, const change_point_options& o = {});

}  // namespace opval
