#pragma once
// Charts as inline SVG text, for the HTML report: self-contained (no script, no external
// reference), each a <svg class="chart ..."> element with a <title> tooltip on every mark.
// A chart is data in, markup out, so a new report section (the run history's trends) is a
// list of series and one call.
#include <string>
#include <utility>
#include <vector>

namespace opval::detail {

/// One line (or set of markers) of a chart: its legend label and its (x, y) points.
struct chart_series {
  std::string label;
  std::vector<std::pair<double, double>> points;
  bool line = true;     ///< false: markers only (a scatter)
  bool dashed = false;  ///< a reference line (a roof, a threshold) rather than data
};

/// A chart of lines over numeric axes, linear or logarithmic. Points that cannot be drawn
/// (non-finite, or not positive on a log axis) are left out.
struct line_chart {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  /// When given, x is an index into these labels (a run label per point, say), one tick each.
  std::vector<std::string> x_categories;
  std::vector<chart_series> series;
};

/// Bars, one per label; `log_y` draws log10(1 + value) heights (counts spanning decades), each
/// bar labelled with its value.
struct bar_chart {
  std::string title, x_label, y_label;
  std::vector<std::string> labels;
  std::vector<double> values;
  bool log_y = false;
};

/// A grid of non-negative values (|error| / bound per tile) as coloured cells: within the bound
/// in shades of green, beyond it yellow to red, infinite (NaN or Inf mismatches) black. `cell_names`
/// gives each cell its tooltip.
struct heatmap {
  std::string title, x_label, y_label;
  std::vector<std::vector<double>> values;  ///< [row][column]
  std::vector<std::string> cell_names;      ///< row-major, optional
};

std::string svg_line_chart(const line_chart& c);
std::string svg_bar_chart(const bar_chart& c);
std::string svg_heatmap(const heatmap& h);

}  // namespace opval::detail
