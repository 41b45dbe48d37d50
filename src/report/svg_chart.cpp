// Inline SVG charts (report/svg_chart.hpp).
#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "report/junit_xml.hpp"
#include "report/report_util.hpp"

namespace opval::detail {
namespace {

// The plot area inside a chart of width x height, leaving room for the axes' labels and,
// on the right, the legend.
constexpr double width = 720, height = 340, left = 72, right = 200, top = 34, bottom = 52;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;

// Colour-blind-safe (Okabe-Ito), then darker variants: lines tell apart up to 12 series.
constexpr const char* palette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
                                   "#000000", "#8c564b", "#7f7f7f", "#bcbd22", "#17becf", "#9467bd"};

std::string colour(std::size_t k) { return palette[k % std::size(palette)]; }

// One axis: where a value lands on it, linear or log10.
struct axis {
  double lo = 0, hi = 1;
  bool log = false;
  double position(double v) const { return ((log ? std::log10(v) : v) - lo) / (hi - lo); }
  bool drawable(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

axis axis_over(const std::vector<double>& values, bool log) {
  axis a{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), log};
  for (double v : values) {
    if (!a.drawable(v)) continue;
    const double t = log ? std::log10(v) : v;
    a.lo = std::min(a.lo, t), a.hi = std::max(a.hi, t);
  }
  if (a.lo > a.hi) a.lo = 0, a.hi = 1;                        // nothing to draw
  if (a.hi - a.lo < 1e-12) a.lo -= log ? 0.5 : 1, a.hi += log ? 0.5 : 1;  // one value: a range around it
  const double pad = (a.hi - a.lo) * 0.05;                     // marks off the frame
  a.lo -= pad, a.hi += pad;
  return a;
}

// Tick values: powers of ten on a log axis (every other one past eight), else 1-2-5 steps.
std::vector<double> ticks(const axis& a) {
  std::vector<double> out;
  if (a.log) {
    // Under two decades, powers of ten alone leave an axis with one tick or none: add 2 and 5.
    const bool fine = a.hi - a.lo < 2;
    const int first = static_cast<int>(std::floor(a.lo)), last = static_cast<int>(std::ceil(a.hi));
    const int step = std::max(1, (last - first + 8) / 8);
    for (int e = first; e <= last; e += step)
      for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1})
        if (const double v = m * std::pow(10.0, e); std::log10(v) >= a.lo && std::log10(v) <= a.hi) out.push_back(v);
    return out;
  }
  const double raw = (a.hi - a.lo) / 5, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / magnitude < 2 ? magnitude : raw / magnitude < 5 ? 2 * magnitude : 5 * magnitude;
  for (double v = std::ceil(a.lo / step) * step; v <= a.hi; v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::string open_svg(const std::string& kind, const std::string& title, double w, double h) {
  return fmt::format(R"~(<svg class="chart {}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="{}">)~"
                     R"~(<rect class="frame" x="0" y="0" width="{}" height="{}" fill="#ffffff"/>)~"
                     R"~(<text class="title" x="{}" y="20" text-anchor="middle">{}</text>)~",
                     kind, w, h, w, h, xml_escape(title), w, h, w / 2, xml_escape(title));
}

std::string axis_labels(const std::string& x_label, const std::string& y_label) {
  return fmt::format(R"~(<text class="axis-label" x="{}" y="{}" text-anchor="middle">{}</text>)~"
                     R"~(<text class="axis-label" transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>)~",
                     left + plot_w / 2, height - 10, xml_escape(x_label), top + plot_h / 2, xml_escape(y_label));
}

// A legend label short enough for the legend's column; the tooltip has it whole.
std::string legend_text(const std::string& label) {
  return label.size() <= 30 ? label : label.substr(0, 29) + "\u2026";
}

std::string legend(const std::vector<chart_series>& series) {
  std::string out;
  for (std::size_t k = 0; k < series.size() && k < 16; ++k) {
    const double y = top + 8 + 16.0 * static_cast<double>(k);
    out += fmt::format(R"~(<g class="legend-item"><title>{}</title><rect x="{}" y="{}" width="12" height="4" fill="{}"/>)~"
                       R"~(<text x="{}" y="{}">{}</text></g>)~",
                       xml_escape(series[k].label), width - right + 12, y - 4, colour(k), width - right + 28, y,
                       xml_escape(legend_text(series[k].label)));
  }
  if (series.size() > 16)
    out += fmt::format(R"~(<text x="{}" y="{}">and {} more</text>)~", width - right + 12, top + 8 + 16.0 * 16,
                       series.size() - 16);
  return out;
}

}  // namespace

std::string svg_line_chart(const line_chart& c) {
  const bool categorical = !c.x_categories.empty();
  std::vector<double> xs, ys;
  for (const chart_series& s : c.series)
    for (const auto& [x, y] : s.points) xs.push_back(x), ys.push_back(y);
  axis ax = categorical ? axis{-0.5, static_cast<double>(c.x_categories.size()) - 0.5, false} : axis_over(xs, c.log_x);
  const axis ay = axis_over(ys, c.log_y);
  auto px = [&](double x) { return left + ax.position(x) * plot_w; };
  auto py = [&](double y) { return top + (1 - ay.position(y)) * plot_h; };
  std::string out = open_svg("line-chart", c.title, width, height);
  out += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="#fafafa" stroke="#999999"/>)~", left, top,
                     plot_w, plot_h);
  for (double t : ticks(ay))
    out += fmt::format(R"~(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" stroke="#e0e0e0"/><text class="tick" x="{}" y="{:.1f}" text-anchor="end">{}</text>)~",
                       left, left + plot_w, py(t), py(t), left - 6, py(t) + 4, xml_escape(compact(t)));
  if (categorical) {
    for (std::size_t k = 0; k < c.x_categories.size(); ++k)
      out += fmt::format(R"~(<text class="tick" x="{:.1f}" y="{}" text-anchor="middle">{}</text>)~", px(static_cast<double>(k)),
                         top + plot_h + 16, xml_escape(legend_text(c.x_categories[k])));
  } else {
    for (double t : ticks(ax))
      out += fmt::format(R"~(<line x1="{:.1f}" x2="{:.1f}" y1="{}" y2="{}" stroke="#e0e0e0"/><text class="tick" x="{:.1f}" y="{}" text-anchor="middle">{}</text>)~",
                         px(t), px(t), top, top + plot_h, px(t), top + plot_h + 16, xml_escape(compact(t)));
  }
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const chart_series& s = c.series[k];
    std::string points, marks;
    for (const auto& [x, y] : s.points) {
      if (!(categorical || ax.drawable(x)) || !ay.drawable(y)) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
      const std::string at = categorical && x >= 0 && x < static_cast<double>(c.x_categories.size())
                                 ? c.x_categories[static_cast<std::size_t>(x)] : compact(x);
      if (!s.dashed)
        marks += fmt::format(R"~(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"><title>{}: {} = {}, {} = {}</title></circle>)~",
                             px(x), py(y), colour(k), xml_escape(s.label), xml_escape(c.x_label), xml_escape(at),
                             xml_escape(c.y_label), xml_escape(compact(y)));
    }
    out += fmt::format(R"~(<g class="series"><title>{}</title>)~", xml_escape(s.label));
    if (s.line && !points.empty())
      out += fmt::format(R"~(<polyline fill="none" stroke="{}" stroke-width="{}"{} points="{}"/>)~", colour(k),
                         s.dashed ? 1.2 : 2, s.dashed ? R"~( stroke-dasharray="6 4")~" : "", points);
    out += marks + "</g>";
  }
  out += axis_labels(c.x_label, c.y_label) + legend(c.series) + "</svg>";
  return out;
}

std::string svg_bar_chart(const bar_chart& c) {
  const std::size_t n = c.values.size();
  auto height_of = [&](double v) { return c.log_y ? std::log10(1 + std::max(v, 0.0)) : std::max(v, 0.0); };
  double top_value = 0;
  for (double v : c.values) top_value = std::max(top_value, height_of(v));
  if (top_value <= 0) top_value = 1;
  const double w = width - right + 20, slot = (w - left - 20) / static_cast<double>(std::max<std::size_t>(n, 1));
  std::string out = open_svg("bar-chart", c.title, w, height);
  out += fmt::format(R"~(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#999999"/>)~", left, w - 20, top + plot_h, top + plot_h);
  for (std::size_t k = 0; k < n; ++k) {
    const double h = plot_h * height_of(c.values[k]) / top_value, x = left + slot * static_cast<double>(k);
    const std::string label = k < c.labels.size() ? c.labels[k] : std::to_string(k);
    out += fmt::format(R"~(<g class="bar"><title>{}: {}</title><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"/>)~"
                       R"~(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)~"
                       R"~(<text class="tick" x="{:.1f}" y="{}" text-anchor="middle">{}</text></g>)~",
                       xml_escape(label), xml_escape(compact(c.values[k])), x + slot * 0.1, top + plot_h - h, slot * 0.8,
                       h, colour(0), x + slot / 2, top + plot_h - h - 4, xml_escape(compact(c.values[k])), x + slot / 2,
                       top + plot_h + 16, xml_escape(label));
  }
  out += fmt::format(R"~(<text class="axis-label" x="{}" y="{}" text-anchor="middle">{}</text>)~"
                     R"~(<text class="axis-label" transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text></svg>)~",
                     (left + w - 20) / 2, height - 10, xml_escape(c.x_label), top + plot_h / 2,
                     xml_escape(c.y_label + (c.log_y ? " (log scale)" : "")));
  return out;
}

namespace {

// Within the bound (ratio <= 1): white to green by log10 of the ratio over 6 decades;
// beyond it: yellow to red over 6 decades; infinite: black.
std::string heat_colour(double ratio) {
  if (std::isinf(ratio) || std::isnan(ratio)) return "#000000";
  if (ratio <= 1) {
    const double t = ratio <= 0 ? 0 : std::clamp(1 + std::log10(ratio) / 6, 0.0, 1.0);
    return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(240 - 150 * t), static_cast<int>(248 - 60 * t),
                       static_cast<int>(240 - 150 * t));
  }
  const double t = std::clamp(std::log10(ratio) / 6, 0.0, 1.0);
  return fmt::format("#{:02x}{:02x}{:02x}", 255, static_cast<int>(210 * (1 - t)), 0);
}

}  // namespace

std::string svg_heatmap(const heatmap& h) {
  const std::size_t rows = h.values.size(), cols = rows ? h.values[0].size() : 0;
  const double side = 360, cell = side / static_cast<double>(std::max<std::size_t>({rows, cols, 1}));
  const double w = left + cell * static_cast<double>(cols) + 170, hh = top + cell * static_cast<double>(rows) + 40;
  std::string out = open_svg("heatmap", h.title, std::max(w, 420.0), std::max(hh, 150.0));
  out += R"~(<g class="tiles" shape-rendering="crispEdges">)~";
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < h.values[r].size(); ++c) {
      const std::size_t k = r * cols + c;
      const std::string name = k < h.cell_names.size() ? h.cell_names[k] : fmt::format("tile {},{}", r, c);
      out += fmt::format(R"~(<rect class="tile" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"><title>{}: max |error| / bound = {}</title></rect>)~",
                         left + cell * static_cast<double>(c), top + cell * static_cast<double>(r), cell, cell,
                         heat_colour(h.values[r][c]), xml_escape(name), xml_escape(compact(h.values[r][c])));
    }
  out += "</g>";
  out += fmt::format(R"~(<rect x="{}" y="{}" width="{:.2f}" height="{:.2f}" fill="none" stroke="#666666"/>)~", left, top,
                     cell * static_cast<double>(cols), cell * static_cast<double>(rows));
  out += fmt::format(R"~(<text class="axis-label" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)~"
                     R"~(<text class="axis-label" transform="translate(24 {:.1f}) rotate(-90)" text-anchor="middle">{}</text>)~",
                     left + cell * static_cast<double>(cols) / 2, top + cell * static_cast<double>(rows) + 26,
                     xml_escape(h.x_label), top + cell * static_cast<double>(rows) / 2, xml_escape(h.y_label));
  // The colour scale, by the values that make each colour.
  const double lx = left + cell * static_cast<double>(cols) + 20;
  const std::pair<double, const char*> keys[] = {{0, "0"}, {1e-3, "1e-3"}, {1, "1 (the bound)"},
                                                 {10, "10"}, {1000, "1000"}, {1e6, "\u2265 1e6"}, {std::numeric_limits<double>::infinity(), "NaN/Inf mismatch"}};
  for (std::size_t k = 0; k < std::size(keys); ++k)
    out += fmt::format(R"~(<rect x="{:.1f}" y="{}" width="14" height="14" fill="{}" stroke="#666666"/><text class="tick" x="{:.1f}" y="{}">{}</text>)~",
                       lx, top + 20.0 * static_cast<double>(k), heat_colour(keys[k].first), lx + 20,
                       top + 20.0 * static_cast<double>(k) + 11, keys[k].second);
  return out + "</svg>";
}

}  // namespace opval::detail
