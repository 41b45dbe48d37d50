#include "bench/bench_report.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "opval/build_info.hpp"
#include "opval/reporter.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

using json = nlohmann::ordered_json;
using detail::time_text;

json counters_json(const std::optional<counter_result>& c) {
  if (!c) return nullptr;
  json per_call = json::object();
  for (const auto& [name, value] : c->per_call) per_call[name] = value;
  return json{{"hardware", c->hardware},
              {"unavailable", c->unavailable},
              {"calls", c->calls},
              {"per_call", per_call},
              {"ipc", c->ipc}};
}

/// "cycles 1.2e+06, instructions 3.4e+06 (IPC 2.83), ...": the per-call counts under a row.
std::string counters_text(const counter_result& c) {
  std::string text;
  for (const auto& [name, value] : c.per_call) {
    text += fmt::format("{}{} {:.3g}", text.empty() ? "" : ", ", name, value);
    if (name == "instructions" && c.ipc > 0) text += fmt::format(" (IPC {:.2f})", c.ipc);
  }
  return text;
}

json sweep_json(const std::vector<std::pair<std::string, std::string>>& point) {
  if (point.empty()) return nullptr;
  json j = json::object();
  for (const auto& [axis, value] : point) j[axis] = value;
  return j;
}

json roofline_json(const std::optional<roofline_place>& place) {
  if (!place) return nullptr;
  return json{{"peak_type", place->peak_type},
              {"peak_gflops", place->peak_gflops},
              {"memory_level", place->memory_level},
              {"bandwidth_gbs", place->bandwidth_gbs},
              {"attainable_gflops", place->attainable_gflops},
              {"bound", place->bound},
              {"percent_of_roof", place->percent_of_roof},
              {"percent_of_bandwidth", place->percent_of_bandwidth}};
}

/// "62% L3", "41% compute": the share of the roof above the result, and which roof it is.
std::string roof_text(const bench_result& r) {
  if (!r.roofline) return "-";
  const roofline_place& place = *r.roofline;
  return fmt::format("{:.3g}% {}", place.percent_of_roof, place.bound == "memory" ? place.memory_level : "compute");
}

json timing_json(const bench_result& r) {
  if (!r.timed) return nullptr;
  const sampling_result& t = r.timing;
  const sample_summary& s = t.summary;
  return json{{"median", s.median},
              {"ci_low", t.median_ci.low},
              {"ci_high", t.median_ci.high},
              {"confidence", t.median_ci.confidence},
              {"ci_block", t.median_ci.block},
              {"mean", s.mean},
              {"stdev", s.stdev},
              {"min", s.min},
              {"max", s.max},
              {"mad", s.mad},
              {"p10", s.p10},
              {"p90", s.p90},
              {"p99", s.p99},
              {"cv", s.cv},
              {"outliers_low", s.outliers_low},
              {"outliers_high", s.outliers_high},
              {"samples", s.n},
              {"batch", t.batch},
              {"converged", t.converged},
              {"stop_reason", t.stop_reason},
              {"warnings", t.warnings},
              {"repetition_medians", t.repetition_medians},
              {"warmup_seconds", t.warmup_seconds},
              {"sampling_seconds", t.sampling_seconds},
              {"timer_resolution", t.timer.resolution},
              {"timer_overhead", t.timer.overhead},
              {"cache", r.cache},
              {"threads", r.threads},
              {"affinity", r.affinity},
              {"gflops", r.gflops},
              {"gbytes_per_second", r.gbytes_per_second},
              {"intensity", r.intensity},
              {"roofline", roofline_json(r.roofline)},
              {"counters", counters_json(r.counters)},
              {"values", t.samples}};
}

std::string ci_text(const bench_result& r) {
  return fmt::format("+-{:.2g}%", 100 * r.timing.median_ci.width_relative_to(r.timing.summary.median));
}

/// A CSV field, quoted (RFC 4180: embedded quotes doubled).
std::string csv_field(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

/// A sweep axis as a table column: as wide as its name or its longest value.
struct axis_column {
  std::string name;
  std::size_t width = 0;
};

/// The columns a sweep's axes add to a table, in the axes' order: every axis but `backend`,
/// which the BACKEND column shows. Without them, the rows of two thread counts look alike.
std::vector<axis_column> axis_columns(const std::vector<sweep_axis>& axes) {
  std::vector<axis_column> columns;
  for (const sweep_axis& a : axes) {
    if (a.name == "backend") continue;
    std::size_t width = a.name.size();
    for (const std::string& v : a.values) width = std::max(width, v.size());
    columns.push_back({a.name, width});
  }
  return columns;
}

bool has_axis(const std::vector<sweep_axis>& axes, std::string_view name) {
  return std::any_of(axes.begin(), axes.end(), [&](const sweep_axis& a) { return a.name == name; });
}

void print_axis_header(std::ostream& out, const std::vector<axis_column>& columns) {
  for (const axis_column& c : columns) {
    std::string name = c.name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::toupper(ch); });
    fmt::print(out, "{:>{}} ", name, c.width);
  }
}

/// The point's value under each column; "-" for an axis the row's template does not use.
void print_axis_cells(std::ostream& out, const std::vector<axis_column>& columns, const sweep_point& point) {
  for (const axis_column& c : columns) {
    const std::string* value = point.find(c.name);
    fmt::print(out, "{:>{}} ", value ? *value : "-", c.width);
  }
}

constexpr const char* row_format = "{:<12} {:<44} {:<16} {:<10} {:>9} {:>8} {:>9} {:>9} {:>7} {:>7}  {}\n";

}  // namespace

namespace {

json environment_object(const environment& e) {
  json caches = json::array();
  for (const cache_info& c : e.caches)
    caches.push_back(json{{"level", c.level}, {"type", c.type}, {"bytes", c.bytes}, {"shared_cpus", c.shared_cpus}});
  return json{{"cpu_model", e.cpu_model},
              {"cpu_flags", e.cpu_flags},
              {"logical_cpus", e.logical_cpus},
              {"cpu_mhz", e.cpu_mhz},
              {"caches", caches},
              {"governor", e.governor},
              {"boost", e.boost},
              {"memory_bytes", e.memory_bytes},
              {"os", e.os},
              {"kernel", e.kernel},
              {"load_average", e.load_average},
              {"opval_version", e.opval_version},
              {"git_sha", e.git_sha},
              {"build_type", e.build_type},
              {"compiler", e.compiler},
              {"cxx_flags", e.cxx_flags},
              {"libraries", e.libraries},
              {"variables", e.variables},
              {"warnings", e.warnings}};
}

}  // namespace

std::string environment_json(const environment& e) { return environment_object(e).dump(); }

std::string bench_json_line(const bench_result& r, const environment* env) {
  const case_result& c = r.check;
  json j{{"schema", "opval-bench"},
         {"schema_version", 1},
         {"descriptor", c.descriptor},
         {"op", c.op},
         {"contract", c.contract},
         {"seed", c.seed},
         {"backend", c.backend},
         {"backend_version", c.backend_version},
         {"implementation", c.exec.implementation},
         {"state", detail::state_label(c.v.st)},
         {"reason", c.v.reason},
         {"timed", r.timed},
         {"counts", json{{"flops", r.counts.flops}, {"bytes", r.counts.bytes}}},
         {"timing", timing_json(r)},
         {"sweep", sweep_json(r.sweep)},
         {"check", json::parse(to_json_line(c))},
         {"environment", env ? environment_object(*env) : json(nullptr)},
         {"opval", json{{"version", build::version}, {"git_sha", build::git_sha}}}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string bench_csv_header() {
  return "descriptor,op,contract,seed,backend,state,timed,median_s,ci_low_s,ci_high_s,mean_s,stdev_s,min_s,max_s,"
         "mad_s,p10_s,p90_s,p99_s,cv,outliers,samples,batch,converged,gflops,gbytes_per_s,intensity,cache,"
         "percent_of_roof,bound\n";
}

std::string bench_csv_row(const bench_result& r) {
  const case_result& c = r.check;
  std::string row = fmt::format("{},{},{},{},{},{},{}", csv_field(c.descriptor), c.op, c.contract, c.seed,
                                csv_field(c.backend), detail::state_label(c.v.st), r.timed ? 1 : 0);
  if (!r.timed) return row + std::string(22, ',') + "\n";
  const sample_summary& s = r.timing.summary;
  return row + fmt::format(",{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.6g},{},{},{},{},{:.6g},{:.6g},{:.6g},{},{},{}\n",
                           s.median, r.timing.median_ci.low, r.timing.median_ci.high, s.mean, s.stdev, s.min, s.max,
                           s.mad, s.p10, s.p90, s.p99, s.cv, s.outliers(), s.n, r.timing.batch,
                           r.timing.converged ? 1 : 0, r.gflops, r.gbytes_per_second, r.intensity, csv_field(r.cache),
                           r.roofline ? fmt::format("{:.6g}", r.roofline->percent_of_roof) : std::string(),
                           r.roofline ? r.roofline->bound : std::string());
}

bool print_comparison(std::ostream& out, const std::vector<compared_case>& cases, const compare_options& o) {
  fmt::print(out,
             "opval bench compare: a change beyond +-{:g}% with Mann-Whitney p < {:g}, wider than either side's "
             "repetitions spread, and with no load or noise warning on either side, is faster or slower\n",
             100 * o.threshold, o.alpha);
  constexpr const char* format = "{:<56} {:<10} {:>9} {:>9} {:>22} {:>8}  {}\n";
  fmt::print(out, fmt::runtime(format), "DESCRIPTOR", "BACKEND", "BASE", "NEW", "RATIO [95% CI]", "P", "VERDICT");
  std::map<std::string, int> counts;
  for (const compared_case& c : cases) {
    const std::string descriptor = c.descriptor.size() > 56 ? c.descriptor.substr(0, 53) + "..." : c.descriptor;
    if (!c.change) {
      fmt::print(out, fmt::runtime(format), descriptor, c.backend, "-", "-", "-", "-", c.note);
      ++counts["not compared"];
      continue;
    }
    const case_change& ch = *c.change;
    fmt::print(out, fmt::runtime(format), descriptor, c.backend, time_text(ch.base_median), time_text(ch.new_median),
               fmt::format("{:.3f} [{:.3f}, {:.3f}]", ch.ratio_point, ch.ratio.low, ch.ratio.high),
               fmt::format("{:.2g}", ch.test.p_value), to_string(ch.verdict));
    if (!ch.noisy_because.empty()) fmt::print(out, "  too noisy: {}\n", ch.noisy_because);
    ++counts[std::string(to_string(ch.verdict))];
  }
  fmt::print(out, "{} slower, {} faster, {} same, {} too noisy to tell, {} not compared\n", counts["slower"],
             counts["faster"], counts["same"], counts["too noisy to tell"], counts["not compared"]);
  return counts["slower"] == 0;
}

void bench_summary::add(const bench_result& r) {
  if (r.timed) {
    ++timed;
    return;
  }
  const state st = r.check.v.st;
  const bool skip = st == state::skipped || st == state::unimplemented;
  (skip || r.check.known_failure ? skipped : failed) += 1;
}

bool bench_summary::ok() const { return failed == 0 && timed > 0; }

namespace {

// The console table: one row per case, the check's reason under a case that was not timed,
// the stop reason under one that missed its CI target; the closing line, then the scaling
// table of a sweep.
class bench_console final : public bench_reporter {
 public:
  bench_console(std::ostream& out, bool show_backend, std::vector<sweep_axis> axes)
      : out_(out), show_backend_(show_backend || has_axis(axes, "backend")), axes_(std::move(axes)),
        columns_(axis_columns(axes_)) {}

  void on_result(const bench_result& r, const sweep_point& point, std::size_t template_index) override {
    row(r, point);
    if (!axes_.empty()) rows_.push_back({point, template_index, r});
  }

  void on_finish(const bench_summary& s) override {
    fmt::print(out_, "{} timed, {} failed, {} skipped\n", s.timed, s.failed, s.skipped);
    if (!rows_.empty()) print_scaling_table(out_, axes_, rows_);
  }

 private:
  void header() {
    if (show_backend_) fmt::print(out_, "{:<12} ", "BACKEND");
    print_axis_header(out_, columns_);
    fmt::print(out_, fmt::runtime(row_format), "OP", "DESCRIPTOR", "CONTRACT", "STATE", "MEDIAN", "CI", "GFLOP/s",
               "GB/s", "CV", "SAMPLES", "ROOF");
    header_printed_ = true;
  }

  /// A descriptor cut to fit its column follows its row whole, so it can be copied back.
  void whole_problem_if_cut(const case_result& c, const std::string& cell) {
    if (cell.ends_with("...")) fmt::print(out_, "  problem: {}\n", c.descriptor);
  }

  void untimed_row(const case_result& c, const std::string& descriptor) {
    fmt::print(out_, fmt::runtime(row_format), c.op, descriptor, c.contract, detail::state_label(c.v.st), "-", "-", "-",
               "-", "-", "-", "-");
    whole_problem_if_cut(c, descriptor);
    const bool skipped = c.v.st == state::skipped || c.v.st == state::unimplemented;
    if (skipped) return;
    if (c.known_failure) fmt::print(out_, "  not timed: a known failure ({})\n", *c.known_failure);
    else fmt::print(out_, "  not timed: the check {}: {}\n  repro: {}\n", detail::state_label(c.v.st), c.v.reason, c.repro);
  }

  void row(const bench_result& r, const sweep_point& point) {
    const case_result& c = r.check;
    if (!header_printed_) header();
    if (show_backend_) fmt::print(out_, "{:<12} ", c.backend);
    print_axis_cells(out_, columns_, point);
    const std::string descriptor = detail::descriptor_cell(c);
    if (!r.timed) return untimed_row(c, descriptor);
    const sample_summary& s = r.timing.summary;
    fmt::print(out_, fmt::runtime(row_format), c.op, descriptor, c.contract, "TIMED", time_text(s.median), ci_text(r),
               fmt::format("{:.3g}", r.gflops), fmt::format("{:.3g}", r.gbytes_per_second), fmt::format("{:.2g}", s.cv),
               s.n, roof_text(r));
    whole_problem_if_cut(c, descriptor);
    if (!r.timing.converged) fmt::print(out_, "  stopped: {}\n", r.timing.stop_reason);
    for (const std::string& w : r.timing.warnings) fmt::print(out_, "  noise: {}\n", w);
    if (r.counters) {
      if (!r.counters->hardware)
        fmt::print(out_, "  hardware counters: not available here ({})\n", r.counters->unavailable);
      if (!r.counters->per_call.empty())
        fmt::print(out_, "  counters per call ({} calls): {}\n", r.counters->calls, counters_text(*r.counters));
    }
  }

  std::ostream& out_;
  bool show_backend_;
  std::vector<sweep_axis> axes_;
  std::vector<axis_column> columns_;
  bool header_printed_ = false;
  std::vector<sweep_row> rows_;
};

class bench_jsonl final : public bench_reporter {
 public:
  bench_jsonl(std::ostream& out, environment env) : out_(out), env_(std::move(env)) {}
  void on_result(const bench_result& r, const sweep_point&, std::size_t) override {
    out_ << bench_json_line(r, &env_) << std::endl;
  }

 private:
  std::ostream& out_;
  environment env_;
};

class bench_csv final : public bench_reporter {
 public:
  explicit bench_csv(std::ostream& out) : out_(out) { out_ << bench_csv_header(); }
  void on_result(const bench_result& r, const sweep_point&, std::size_t) override { out_ << bench_csv_row(r) << std::flush; }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<bench_reporter> make_bench_console_reporter(std::ostream& out, bool show_backend,
                                                            std::vector<sweep_axis> axes) {
  return std::make_unique<bench_console>(out, show_backend, std::move(axes));
}

std::unique_ptr<bench_reporter> make_bench_jsonl_reporter(std::ostream& out, environment env) {
  return std::make_unique<bench_jsonl>(out, std::move(env));
}

std::unique_ptr<bench_reporter> make_bench_csv_reporter(std::ostream& out) { return std::make_unique<bench_csv>(out); }

void print_scaling_table(std::ostream& out, const std::vector<sweep_axis>& axes, const std::vector<sweep_row>& rows) {
  const bool threads_axis = has_axis(axes, "threads");
  const std::vector<axis_column> columns = axis_columns(axes);
  // The key of a row apart from its thread count: its template, backend and other axes' values.
  const auto others = [](const sweep_row& r) {
    std::string key = std::to_string(r.template_index) + "|" + r.result.check.backend;
    for (const auto& [name, value] : r.point.values)
      if (name != "threads") key += "|" + value;
    return key;
  };
  std::map<std::string, const sweep_row*> first_threads;
  for (const sweep_row& r : rows)
    if (r.result.timed) first_threads.emplace(others(r), &r);
  fmt::print(out, "\nscaling:\n");
  print_axis_header(out, columns);
  fmt::print(out, "{:<10} {:>10} {:>10} {:>10}", "BACKEND", "MEDIAN", "GFLOP/s", "GB/s");
  if (threads_axis) fmt::print(out, " {:>8} {:>10}", "SPEEDUP", "EFFICIENCY");
  fmt::print(out, "\n");
  for (const sweep_row& r : rows) {
    print_axis_cells(out, columns, r.point);
    fmt::print(out, "{:<10} ", r.result.check.backend);
    if (!r.result.timed) {
      fmt::print(out, "{:>10}\n", "not timed");
      continue;
    }
    const double median = r.result.timing.summary.median;
    fmt::print(out, "{:>10} {:>10.4g} {:>10.4g}", time_text(median), r.result.gflops,
               r.result.gbytes_per_second);
    if (threads_axis) {
      const sweep_row& base = *first_threads.at(others(r));
      const double speedup = base.result.timing.summary.median / median;
      const double ratio = static_cast<double>(std::max(r.result.threads, 1)) / std::max(base.result.threads, 1);
      fmt::print(out, " {:>8.3g} {:>9.3g}%", speedup, 100 * speedup / ratio);
    }
    fmt::print(out, "\n");
  }
}

}  // namespace opval
