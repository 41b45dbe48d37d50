// The HTML report (report/html_report.hpp): read the sources, then one function per section,
// each returning its <section>. Every text that comes from a record goes through xml_escape:
// descriptors, reasons and backend names are user input.
#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "bench/bench_records.hpp"
#include "core/journal.hpp"
#include "core/output_file.hpp"
#include "opval/error.hpp"
#include "opval/reporter.hpp"
#include "report/junit_xml.hpp"
#include "report/report_util.hpp"
#include "report/svg_chart.hpp"

namespace opval {
namespace {

using detail::compact;
constexpr double inf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------- what the report reads

/// A checked case and the file it came from (a journal, or a bench file's check).
struct reported_case {
  case_result r;
  std::string origin;
  bool bench_check = false;  ///< a bench record's check, not a run's case
};

struct report_data {
  std::vector<reported_case> cases;
  std::vector<bench_record> bench;
  std::vector<std::string> notes;  ///< about the sources: an unfinished journal
};

report_data read_sources(const report_sources& s) {
  if (s.journals.empty() && s.bench.empty())
    throw error("report: give a run's journal (opval run --jsonl FILE) or bench records (--bench FILE), or both");
  report_data d;
  for (const std::string& path : s.journals) {
    journal_contents j = read_journal(path);  // names the file and line on any error
    if (j.unfinished) d.notes.push_back(fmt::format("journal '{}' ends in an unfinished line (the run was interrupted "
                                                    "or is still going): its finished records are reported", path));
    for (case_result& r : j.records) d.cases.push_back({std::move(r), path});
  }
  for (const std::string& path : s.bench)
    for (bench_record& b : read_bench_records(path)) {  // names the file and line on any error
      // The bench's check is a whole run record: a failing check is a failure like a run's.
      if (!b.check.empty()) try {
          d.cases.push_back({from_json_line(b.check), path, true});
        } catch (const std::exception& e) {
          throw error(fmt::format("{}: the check of '{}' on {}: {}", path, b.descriptor, b.backend, e.what()));
        }
      d.bench.push_back(std::move(b));
    }
  return d;
}

// ---------------------------------------------------------------- HTML pieces

std::string esc(const std::string& text) { return xml_escape(text); }

std::string section(const char* id, const char* heading, const std::string& body) {
  return fmt::format("<section id=\"{}\"><h2>{}</h2>\n{}</section>\n", id, heading, body);
}

std::string paragraph(const std::string& text) { return "<p>" + esc(text) + "</p>\n"; }

/// A table of already-rendered cells (each built with esc()).
std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                  const char* cls = "data") {
  std::string out = fmt::format("<table class=\"{}\"><thead><tr>", cls);
  for (const std::string& h : head) out += "<th>" + esc(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const std::string& cell : row) out += "<td>" + cell + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string state_badge(state s, bool known = false) {
  return fmt::format("<span class=\"state {}{}\">{}</span>", to_string(s), known ? " known" : "",
                     esc(detail::state_label(s)) + (known ? " (known)" : ""));
}

std::string code(const std::string& text) { return "<code>" + esc(text) + "</code>"; }

std::string case_name(const case_result& r) { return r.descriptor + " on " + r.backend; }

// The case's worst output figures: the largest error in ULPs at the output's scale and in
// bounds, over its outputs.
std::pair<double, double> worst_figures(const case_result& r) {
  double ulps = 0, over = 0;
  for (const output_verdict& o : r.v.outputs)
    ulps = std::max(ulps, o.m.max_scaled_ulps), over = std::max(over, o.m.max_error_over_bound);
  return {ulps, over};
}

// ---------------------------------------------------------------- the sections

std::string summary_section(const report_sources& s, const report_data& d) {
  run_summary total;
  std::map<std::string, run_summary> by_backend;
  for (const reported_case& c : d.cases) total.add(c.r), by_backend[c.r.backend].add(c.r);
  std::string body = "<div class=\"totals\">";
  const std::pair<const char*, int> counts[] = {{"cases", total.total()}, {"passed", total.passed},
                                                 {"failed", total.failed}, {"mistrusted", total.mistrusted},
                                                 {"crashed", total.crashed}, {"timed out", total.timed_out},
                                                 {"skipped", total.skipped}, {"unimplemented", total.unimplemented},
                                                 {"benchmarks", static_cast<int>(d.bench.size())}};
  for (const auto& [label, n] : counts)
    body += fmt::format("<div class=\"total\"><span class=\"n\">{}</span> {}</div>", n, label);
  body += "</div>\n";
  if (const auto checks = std::ranges::count_if(d.cases, &reported_case::bench_check); checks > 0)
    body += paragraph(fmt::format("The cases are the journals' {} and the {} checks of the bench records (a bench times "
                                  "a case only once its check passed).",
                                  d.cases.size() - static_cast<std::size_t>(checks), checks));
  if (total.known_failed + total.known_passed > 0)
    body += paragraph(fmt::format("{} listed known failures failed, {} passed.", total.known_failed, total.known_passed));
  std::vector<std::vector<std::string>> sources;
  for (const std::string& j : s.journals) sources.push_back({"journal", code(j)});
  for (const std::string& b : s.bench) sources.push_back({"bench records", code(b)});
  body += table({"source", "file"}, sources);
  for (const std::string& note : d.notes) body += "<p class=\"note\">" + esc(note) + "</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [backend, t] : by_backend)
    rows.push_back({esc(backend), std::to_string(t.total()), std::to_string(t.passed), std::to_string(t.failed),
                    std::to_string(t.mistrusted), std::to_string(t.crashed + t.timed_out),
                    std::to_string(t.skipped + t.unimplemented)});
  if (!rows.empty())
    body += table({"backend", "cases", "passed", "failed", "mistrusted", "crash/timeout", "skipped/unimplemented"}, rows);
  std::vector<std::vector<std::string>> all;
  for (const reported_case& c : d.cases) {
    const auto [ulps, over] = worst_figures(c.r);
    all.push_back({state_badge(c.r.v.st, c.r.known_failure.has_value()), esc(c.r.op), code(c.r.descriptor),
                   esc(c.r.backend), esc(compact(ulps)), esc(compact(over)), esc(c.r.v.reason)});
  }
  if (!all.empty())
    body += fmt::format("<details><summary>every case ({})</summary>\n{}</details>\n", all.size(),
                        table({"state", "op", "descriptor", "backend", "max ULPs (scaled)", "max |err|/bound", "reason"},
                              all));
  return section("summary", "Summary", body);
}

std::string worst_table(const metrics& m) {
  std::vector<std::vector<std::string>> rows;
  for (const worst_element& w : m.worst)
    rows.push_back({esc(detail::index_string(w.index)), esc(compact(w.expected)), esc(compact(w.got)),
                    esc(compact(w.bound)), esc(compact(w.abs_error)), esc(compact(w.ulps)),
                    esc(compact(w.bound > 0 ? w.abs_error / w.bound : inf))});
  if (rows.empty()) return paragraph("No worst elements recorded (--worst 0).");
  return table({"index", "expected (fp64)", "got", "bound", "|error|", "ULPs", "|error|/bound"}, rows, "data worst");
}

std::vector<std::string> ulp_bin_labels() {
  std::vector<std::string> labels{"0"};
  for (int k = 1; k < ulp_bins - 1; ++k) labels.push_back(fmt::format("\u2264{:g}", ulp_bin_edges[k]));
  labels.push_back(fmt::format(">{:g}", ulp_bin_edges[ulp_bins - 2]));
  return labels;
}

std::string ulp_histogram_chart(const std::string& title, const std::vector<std::int64_t>& counts) {
  detail::bar_chart c{title, "|error| in ULPs of the output type", "elements", ulp_bin_labels(), {}, true};
  for (std::int64_t n : counts) c.values.push_back(static_cast<double>(n));
  return detail::svg_bar_chart(c);
}

std::string tiles_heatmap(const std::string& output, const error_tiles& t) {
  detail::heatmap h{fmt::format("'{}': max |error| / bound per tile ({} x {} elements each)", output, t.tile_rows,
                                t.tile_cols),
                    fmt::format("columns (last dimension, {})", t.cols),
                    fmt::format("rows (leading dimensions folded, {})", t.rows), t.max_error_over_bound, {}};
  for (std::size_t r = 0; r < t.max_error_over_bound.size(); ++r)
    for (std::size_t c = 0; c < t.max_error_over_bound[r].size(); ++c) {
      const std::int64_t r0 = static_cast<std::int64_t>(r) * t.tile_rows, c0 = static_cast<std::int64_t>(c) * t.tile_cols;
      h.cell_names.push_back(fmt::format("rows {}-{}, columns {}-{}", r0, std::min(t.rows, r0 + t.tile_rows) - 1, c0,
                                         std::min(t.cols, c0 + t.tile_cols) - 1));
    }
  return detail::svg_heatmap(h);
}

// Charts per failing output, at most: a heatmap is about 1000 tiles of markup (some 150 kB),
// and a run where a backend fails everything would otherwise make a report too large to open.
// The worst elements of every failure are kept.
constexpr int max_charted_outputs = 50;

std::string failed_output(const output_verdict& o, bool charts) {
  const metrics& m = o.m;
  std::string out = fmt::format("<div class=\"output\"><h4>output {} {}</h4>\n", code(o.name), state_badge(o.st));
  out += paragraph(o.reason);
  out += fmt::format("<details><summary>the bound</summary>{}</details>\n", code(o.bound));
  out += paragraph(fmt::format("{} of {} elements beyond the bound; max |error| / bound {}, max {} ULPs ({} at the "
                               "output's scale), NaN mismatches {}, Inf mismatches {}.",
                               m.beyond_bound, m.count, compact(m.max_error_over_bound), compact(m.max_ulps),
                               compact(m.max_scaled_ulps), m.nan_mismatch, m.inf_mismatch));
  for (const output_check& c : o.checks)
    if (c.st != state::passed) out += paragraph(c.reason);
  out += "<h5>worst elements</h5>\n" + worst_table(m);
  if (!charts) return out + "</div>\n";
  out += "<div class=\"charts\">";
  if (!m.tiles.empty()) out += tiles_heatmap(o.name, m.tiles);
  if (!m.ulp_histogram.empty()) out += ulp_histogram_chart(fmt::format("'{}': ULP error histogram", o.name), m.ulp_histogram);
  return out + "</div></div>\n";
}

std::string failures_section(const report_data& d) {
  std::string body;
  int n = 0, charted = 0;
  for (const reported_case& c : d.cases) {
    const case_result& r = c.r;
    if (!is_failure(r.v.st)) continue;
    ++n;
    body += fmt::format("<article class=\"failure\"><h3>{} {}</h3>\n", state_badge(r.v.st, r.known_failure.has_value()),
                        code(case_name(r)));
    // The case's reason is its first failing output's, shown with that output below.
    if (std::ranges::none_of(r.v.outputs, [](const output_verdict& o) { return o.st != state::passed; }))
      body += paragraph(r.v.reason);
    if (r.known_failure) body += paragraph("Listed as a known failure: " + *r.known_failure);
    body += fmt::format("<p>reproduce: {}</p>\n<p class=\"origin\">from {}</p>\n", code(r.repro), code(c.origin));
    for (const output_verdict& o : r.v.outputs)
      if (o.st != state::passed) body += failed_output(o, charted++ < max_charted_outputs);
    body += "</article>\n";
  }
  if (n == 0) body = paragraph("No case failed, was mistrusted, crashed or timed out.");
  if (charted > max_charted_outputs)
    body = paragraph(fmt::format("{} outputs failed: the first {} have their heatmap and histogram, every one its worst "
                                 "elements.", charted, max_charted_outputs)) + body;
  return section("failures", "Failures", body);
}

// Each output's largest |error| / bound, binned by decades: how close the run comes to its
// bounds, and how far beyond them the failures go.
std::string histograms_section(const report_data& d) {
  const std::vector<std::string> labels = {"0", "\u22641e-4", "\u22641e-3", "\u22641e-2", "\u22640.1", "\u22641",
                                           "\u226410", "\u2264100", ">100", "NaN/Inf"};
  std::vector<double> over(labels.size(), 0);
  std::vector<std::int64_t> ulps(ulp_bins, 0);
  int outputs = 0;
  for (const reported_case& c : d.cases)
    for (const output_verdict& o : c.r.v.outputs) {
      if (o.m.count == 0) continue;
      ++outputs;
      const double x = o.m.max_error_over_bound;
      const std::size_t bin = x <= 0 ? 0 : std::isinf(x) || std::isnan(x) ? labels.size() - 1
                              : x > 100 ? labels.size() - 2
                                        : static_cast<std::size_t>(std::clamp(std::ceil(std::log10(x)) + 5, 1.0, 7.0));
      ++over[bin];
      for (std::size_t k = 0; k < o.m.ulp_histogram.size() && k < ulps.size(); ++k) ulps[k] += o.m.ulp_histogram[k];
    }
  if (outputs == 0) return section("histograms", "Error histograms", paragraph("No output was compared."));
  std::string body = paragraph(fmt::format(
      "Over the {} compared outputs: each output's largest |error| / bound (beyond 1 fails), and the ULP errors of all "
      "their elements together.", outputs));
  body += "<div class=\"charts\">";
  body += detail::svg_bar_chart({"max |error| / bound per output", "max |error| / bound", "outputs", labels, over, false});
  body += ulp_histogram_chart("ULP errors of every element", ulps);
  return section("histograms", "Error histograms", body + "</div>\n");
}

std::string bias_section(const report_data& d) {
  std::vector<std::vector<std::string>> rows;
  detail::chart_series fair{"not biased", {}, false}, biased{"biased", {}, false};
  int without_power = 0, not_applied = 0;
  for (const reported_case& c : d.cases)
    for (const output_verdict& o : c.r.v.outputs) {
      const bias_result& b = o.m.bias;
      if (o.m.count == 0) continue;
      if (!b.has_power && !b.biased) {
        (b.note.starts_with("not applied") ? not_applied : without_power)++;
        continue;
      }
      rows.push_back({code(case_name(c.r)), code(o.name), esc(fmt::format("{:+.3f} (z {:+.1f})", b.sign_relative_mean, b.sign_relative_z)),
                      esc(fmt::format("{:+.3f} (z {:+.1f})", b.plain_mean, b.plain_z)), std::to_string(b.eligible),
                      b.biased ? "<span class=\"state FAILED\">BIASED</span>" : "no", esc(b.note)});
      (b.biased ? biased : fair).points.emplace_back(b.sign_relative_mean, std::max(std::fabs(b.sign_relative_z), 1e-3));
    }
  std::string body = paragraph(
      "The rounding-bias test (docs/NUMERICS.md): the mean of the rounding errors in ULPs over the elements whose error "
      "is dominated by the output's rounding, signed relative to the value (truncation shows as about -0.5) and plain "
      "(directed rounding shows as about +-0.5), with a z-test of each.");
  body += paragraph(fmt::format("{} outputs had the power to be tested; {} had too few rounding-dominated elements; the "
                                "test did not apply to {}.", rows.size(), without_power, not_applied));
  if (!rows.empty()) {
    body += "<div class=\"charts\">" +
            detail::svg_line_chart({"bias: mean rounding error against its z", "sign-relative mean (ULP)", "|z|", false, true,
                                    {}, {fair, biased}}) + "</div>\n";
    body += table({"case", "output", "sign-relative mean", "plain mean", "eligible", "biased", "note"}, rows);
  }
  return section("bias", "Bias test", body);
}

// The sweep axis the scaling curves run along: the first numeric one that varies, the thread
// count aside (its points are series); none outside a sweep.
std::optional<std::string> size_axis(const std::vector<bench_record>& points) {
  std::map<std::string, std::set<std::string>> values;
  std::vector<std::string> order;
  for (const bench_record& b : points)
    for (const auto& [axis, value] : b.sweep) {
      if (!values.contains(axis)) order.push_back(axis);
      values[axis].insert(value);
    }
  for (const std::string& axis : order) {
    if (axis == "threads" || values[axis].size() < 2) continue;
    if (std::ranges::all_of(values[axis], [](const std::string& v) {
          char* end = nullptr;
          std::strtod(v.c_str(), &end);
          return !v.empty() && *end == '\0';
        }))
      return axis;
  }
  return std::nullopt;
}

std::string bench_table(const std::vector<bench_record>& points) {
  std::vector<std::vector<std::string>> rows;
  for (const bench_record& b : points) {
    const std::string roof = b.roofline ? fmt::format("{:.0f}% of the {} roof", b.roofline->percent_of_roof, b.roofline->bound) : "";
    rows.push_back({code(b.descriptor), esc(b.backend), esc(b.threads),
                    b.timed ? esc(fmt::format("{} [{}, {}]", detail::time_text(b.median), detail::time_text(b.ci_low),
                                              detail::time_text(b.ci_high)))
                            : esc("not timed (" + b.state + ")"),
                    esc(b.timed ? compact(b.gflops) : ""), esc(b.timed ? compact(b.gbytes_per_second) : ""), esc(roof)});
  }
  return table({"descriptor", "backend", "threads", "median [95% CI]", "GFLOP/s", "GB/s", "roofline"}, rows);
}

// A result's series in the legend: its backend, and its op and contract where the results
// have several (the sweep's other axes are added by the caller).
std::string series_name(const std::vector<bench_record>& all, const bench_record& b) {
  auto varies = [&](auto field) { return std::ranges::any_of(all, [&](const bench_record& o) { return field(o) != field(b); }); };
  std::string name = b.backend;
  if (varies([](const bench_record& p) { return p.op; })) name += " " + b.op;
  if (varies([](const bench_record& p) { return p.contract; })) name += " " + b.contract;
  return name;
}

std::string scaling_section(const report_data& d) {
  std::vector<bench_record> timed;
  for (const bench_record& b : d.bench)
    if (b.timed) timed.push_back(b);
  if (d.bench.empty())
    return section("scaling", "Scaling", paragraph("No bench records were given (opval bench --jsonl FILE; --bench FILE here)."));
  const std::optional<std::string> axis = size_axis(timed);
  const bool flops = std::ranges::any_of(timed, [](const bench_record& b) { return b.flops > 0; });
  std::map<std::string, detail::chart_series> series;  // by backend, op, contract and the other axes
  for (const bench_record& b : timed) {
    std::string label = series_name(timed, b);
    double x = b.bytes;
    for (const auto& [name, value] : b.sweep)
      if (axis && name == *axis) x = std::strtod(value.c_str(), nullptr);
      else label += " " + name + "=" + value;
    if (b.sweep.empty() && !b.threads.empty()) label += " threads=" + b.threads;
    auto& s = series.try_emplace(label, detail::chart_series{label, {}}).first->second;
    s.points.emplace_back(x, flops ? b.gflops : b.gbytes_per_second);
  }
  detail::line_chart chart{flops ? "throughput against size" : "bandwidth against size",
                           axis ? *axis : "bytes moved per call", flops ? "GFLOP/s" : "GB/s", !axis, false, {}, {}};
  for (auto& [label, s] : series) {
    std::ranges::sort(s.points);
    chart.series.push_back(std::move(s));
  }
  std::string body = paragraph(axis ? fmt::format("Throughput along the sweep's axis '{}', one line per backend, op, "
                                                  "contract and other axes' values.", *axis)
                                    : "Throughput against the bytes each case moves (the records are not a sweep).");
  if (!timed.empty()) body += "<div class=\"charts\">" + detail::svg_line_chart(chart) + "</div>\n";
  return section("scaling", "Scaling", body + bench_table(d.bench));
}

std::string roofline_section(const report_data& d) {
  std::map<std::string, const bench_roof*> roofs;  // by what they say, once each
  std::map<std::string, detail::chart_series> results;
  double lo = inf, hi = 0;
  for (const bench_record& b : d.bench) {
    if (!b.timed || !b.roofline || b.intensity <= 0) continue;
    const bench_roof& r = *b.roofline;
    roofs.emplace(fmt::format("{} {} GFLOP/s, {} {} GB/s{}", r.peak_type, compact(r.peak_gflops), r.memory_level,
                              compact(r.bandwidth_gbs), b.threads.empty() ? "" : ", " + b.threads + " threads"),
                  &r);
    const std::string label = series_name(d.bench, b) + (b.threads.empty() ? "" : " threads=" + b.threads);
    results.try_emplace(label, detail::chart_series{label, {}, false}).first->second.points.emplace_back(b.intensity, b.gflops);
    lo = std::min(lo, b.intensity), hi = std::max(hi, b.intensity);
  }
  if (roofs.empty())
    return section("roofline", "Roofline",
                   paragraph("No roofline: no bench record carries the machine's peaks (run opval bench --machine "
                             "first, then opval bench; docs/BENCHMARKING.md)."));
  detail::line_chart chart{"roofline", "arithmetic intensity (FLOP/byte)", "GFLOP/s", true, true, {}, {}};
  for (const auto& [label, r] : roofs) {
    detail::chart_series line{label, {}, true, true};
    const double ridge = r->peak_gflops / r->bandwidth_gbs;
    for (double x : {lo / 4, ridge, hi * 4})
      if (x >= lo / 4 && x <= std::max(hi * 4, lo / 4)) line.points.emplace_back(x, std::min(r->peak_gflops, r->bandwidth_gbs * x));
    std::ranges::sort(line.points);
    chart.series.push_back(std::move(line));
  }
  for (auto& [label, s] : results) chart.series.push_back(std::move(s));
  const std::string body = paragraph("Each timed result at its arithmetic intensity under the roofs it was placed under: "
                                     "the machine's FMA peak for its type and the bandwidth of the memory level its "
                                     "data lives in (the records' timing.roofline).");
  return section("roofline", "Roofline", body + "<div class=\"charts\">" + detail::svg_line_chart(chart) + "</div>\n");
}

std::string trends_section(const std::vector<trend_series>& trends) {
  if (trends.empty())
    return section("trends", "Performance trends",
                   paragraph("No run history was given: the trends of each case across runs appear here when the "
                             "report is made with one."));
  std::string body = "<div class=\"charts\">";
  for (const trend_series& t : trends) {
    detail::line_chart chart{t.name, "run", t.unit, false, false, {}, {{t.unit, {}}}};
    for (const auto& [run, value] : t.points) {
      chart.series[0].points.emplace_back(static_cast<double>(chart.x_categories.size()), value);
      chart.x_categories.push_back(run);
    }
    body += detail::svg_line_chart(chart);
  }
  return section("trends", "Performance trends", body + "</div>\n");
}

constexpr const char* style = R"~(
body { font-family: system-ui, sans-serif; margin: 0 2em 2em; color: #222; background: #fff; }
header { border-bottom: 2px solid #0072b2; margin-bottom: 1em; }
nav a { margin-right: 1em; color: #0072b2; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 90%; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #eef3f8; }
code { font-family: ui-monospace, monospace; font-size: 90%; background: #f4f4f4; padding: 0 .2em; word-break: break-all; }
.totals { display: flex; flex-wrap: wrap; gap: .6em; }
.total { border: 1px solid #ccc; border-radius: 6px; padding: .4em .8em; background: #f8f8f8; }
.total .n { font-size: 150%; font-weight: bold; }
.state { font-weight: bold; padding: 0 .3em; border-radius: 3px; color: #fff; background: #7f7f7f; }
.state.PASSED { background: #009e73; } .state.FAILED, .state.CRASH, .state.TIMEOUT { background: #d55e00; }
.state.MISTRUSTED { background: #cc79a7; } .state.known { background: #e69f00; }
.failure { border-left: 4px solid #d55e00; padding-left: 1em; margin: 1.2em 0; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
svg.chart { border: 1px solid #ddd; font-size: 11px; }
svg .title { font-size: 13px; font-weight: bold; }
.note { color: #a04000; }
)~";

std::string render(const report_sources& sources, const report_data& d) {
  std::string page = fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                                 "<title>{}</title><style>{}</style></head><body>\n<header><h1>{}</h1><nav>",
                                 esc(sources.title), style, esc(sources.title));
  for (const auto& [id, name] : {std::pair{"summary", "Summary"}, {"failures", "Failures"}, {"histograms", "Error histograms"},
                                 {"bias", "Bias test"}, {"scaling", "Scaling"}, {"roofline", "Roofline"},
                                 {"trends", "Performance trends"}})
    page += fmt::format("<a href=\"#{}\">{}</a>", id, name);
  page += "</nav></header>\n<main>\n";
  page += summary_section(sources, d) + failures_section(d) + histograms_section(d) + bias_section(d) +
          scaling_section(d) + roofline_section(d) + trends_section(sources.trends);
  return page + "</main></body></html>\n";
}

}  // namespace

std::string html_report(const report_sources& sources) { return render(sources, read_sources(sources)); }

std::string write_html_report(const report_sources& sources, const std::string& path) {
  std::vector<std::string> inputs = sources.journals;
  inputs.insert(inputs.end(), sources.bench.begin(), sources.bench.end());
  // Read and rendered before the file is opened: bad input leaves no file behind.
  const report_data d = read_sources(sources);
  const std::string page = render(sources, d);
  output_file out(path, false, "HTML report", inputs);
  out.stream() << page << std::flush;
  out.record_written();
  out.check_reached();
  return fmt::format("{} case{} and {} benchmark{}", d.cases.size(), d.cases.size() == 1 ? "" : "s", d.bench.size(),
                     d.bench.size() == 1 ? "" : "s");
}

}  // namespace opval
