#pragma once
// Sweeps (docs/BENCHMARKING.md, "Sweeps and scaling"): named axes of values over which
// `opval bench` repeats its cases. Problem templates name axes as {placeholders}
// (`matmul m={n} n={n} k={n} dt={dt}`); the axes `threads` (OpenMP threads while timing) and
// `backend` are the run's own. Axes combine as a cartesian product, except those zipped
// together, which advance in step. The results print as a scaling table, and their records
// carry the point, for plots (python -m opval plot).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/bench.hpp"

namespace opval {

struct sweep_axis {
  std::string name;
  std::vector<std::string> values;
};

/// One combination of axis values, in the order the axes were given.
struct sweep_point {
  std::vector<std::pair<std::string, std::string>> values;
  /// The value of `axis`, or nullptr when the point has none.
  const std::string* find(std::string_view axis) const;
};

/// "n=64,128,256" (name: a letter or '_', then letters, digits, '_'). Throws opval::error
/// naming the text when malformed or when a value is empty or repeated.
sweep_axis parse_axis(std::string_view text);

/// The points of `axes`: a cartesian product, the first axis outermost, where each group of
/// `zipped` names (each group at least two axes of equal length) is one dimension whose
/// values advance together. Throws opval::error for a zipped name no axis has, a name in two
/// groups, unequal lengths, or an axis given twice.
std::vector<sweep_point> sweep_points(const std::vector<sweep_axis>& axes, const std::vector<std::vector<std::string>>& zipped);

/// The {placeholders} of a problem template, in order of first appearance.
std::vector<std::string> placeholders(std::string_view text);

/// `text` with each {name} replaced by the point's value. Throws opval::error for a
/// placeholder the point has no value for.
std::string instantiate(std::string_view text, const sweep_point& p);

/// One timed (or not) case of a sweep: its point, the template it came from, and its result.
struct sweep_row {
  sweep_point point;
  std::size_t template_index = 0;
  bench_result result;
};

}  // namespace opval
