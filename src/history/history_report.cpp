// Printing the history's answers (history/history_report.hpp).
#include "history/history_report.hpp"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "opval/error.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

using nlohmann::json;
using detail::time_text;
using detail::wrap;

std::string short_commit(const std::string& c) { return c.empty() ? "(none)" : c.substr(0, 12); }

std::string case_line(const case_key_fields& c) {
  std::string line = fmt::format("{} on {}", c.descriptor, c.backend);
  if (c.seed != 1) line += fmt::format(" seed {}", c.seed);
  if (!c.reference.empty()) line += fmt::format(" against {}", c.reference);
  return line;
}

json case_json(const case_key_fields& c) {
  return {{"op", c.op}, {"backend", c.backend}, {"descriptor", c.descriptor}, {"seed", c.seed},
          {"reference", c.reference}};
}

json run_json(const run_point& r) {
  return {{"run", r.run}, {"commit", r.commit}, {"started", r.started}, {"tier", r.tier}};
}

json optional_json(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

void print_failing(const std::vector<failing_case>& rows, bool as_json, std::ostream& out) {
  if (as_json) {
    json a = json::array();
    for (const failing_case& f : rows)
      a.push_back({{"case", case_json(f.c)}, {"state", f.state}, {"reason", f.reason}, {"known", f.known},
                   {"since", run_json(f.since)}, {"last_pass", f.last_pass ? run_json(*f.last_pass) : json(nullptr)},
                   {"failing_runs", f.failing_runs}});
    out << a.dump() << '\n';
    return;
  }
  if (rows.empty()) out << "no case fails at its latest run\n";
  for (const failing_case& f : rows) {
    out << fmt::format("{}{}\n", case_line(f.c), f.known ? " (known failure)" : "");
    out << fmt::format("  {} since commit {} (run {}, {}), {} run{} in a row; ", f.state, short_commit(f.since.commit),
                       f.since.run, f.since.started, f.failing_runs, f.failing_runs == 1 ? "" : "s");
    out << (f.last_pass ? fmt::format("last passed at commit {} (run {}, {})\n", short_commit(f.last_pass->commit),
                                      f.last_pass->run, f.last_pass->started)
                        : std::string("never passed in this history\n"));
    if (!f.reason.empty()) out << wrap(f.reason, 118, 4, 4) << '\n';
  }
}

void print_flaky(const std::vector<flaky_case>& rows, bool as_json, std::ostream& out) {
  if (as_json) {
    json a = json::array();
    for (const flaky_case& f : rows)
      a.push_back({{"case", case_json(f.c)}, {"commit", f.commit}, {"passed", f.passed}, {"failed", f.failed},
                   {"states", f.states}});
    out << a.dump() << '\n';
    return;
  }
  if (rows.empty()) out << "no case had different verdicts at one commit\n";
  for (const flaky_case& f : rows)
    out << fmt::format("{}\n  at commit {}: {} passed, {} failed ({})\n", case_line(f.c), short_commit(f.commit),
                       f.passed, f.failed, fmt::join(f.states, ", "));
}

json changes_json(const std::vector<change_point>& changes) {
  json a = json::array();
  for (const change_point& c : changes)
    a.push_back({{"index", c.index}, {"before", c.before}, {"after", c.after}, {"ratio", c.ratio}, {"p_value", c.p_value}});
  return a;
}

void print_trends(const std::vector<case_trend>& rows, trend_metric metric, bool as_json, std::ostream& out) {
  if (as_json) {
    json a = json::array();
    for (const case_trend& t : rows) {
      json points = json::array();
      for (const trend_point& p : t.points)
        points.push_back({{"at", run_json(p.at)}, {"value", p.value}, {"ci_low", optional_json(p.ci_low)},
                          {"ci_high", optional_json(p.ci_high)}});
      a.push_back({{"case", case_json(t.c)}, {"points", points}, {"changes", changes_json(t.changes)}});
    }
    out << a.dump() << '\n';
    return;
  }
  const char* what = metric == trend_metric::latency ? "median latency" : "case time";
  if (rows.empty()) out << fmt::format("no {} changed (or no case has two recorded runs)\n", what);
  for (const case_trend& t : rows) {
    out << fmt::format("{}: {} over {} runs, {} to {}\n", case_line(t.c), what, t.points.size(),
                       time_text(t.points.front().value), time_text(t.points.back().value));
    for (const change_point& c : t.changes) {
      const run_point& at = t.points[c.index].at;
      out << fmt::format("  {} x{:.3f} at commit {} (run {}, {}): {} -> {} (p = {:.2g})\n",
                         c.ratio > 1 ? "slower" : "faster", c.ratio, short_commit(at.commit), at.run, at.started,
                         time_text(c.before), time_text(c.after), c.p_value);
    }
  }
}

void print_slowest(const std::vector<slow_case>& rows, int recent, bool as_json, std::ostream& out) {
  if (as_json) {
    json a = json::array();
    for (const slow_case& s : rows)
      a.push_back({{"case", case_json(s.c)}, {"median_seconds", s.median_seconds}, {"runs", s.runs}});
    out << a.dump() << '\n';
    return;
  }
  if (rows.empty()) out << "no case time recorded\n";
  for (const slow_case& s : rows)
    out << fmt::format("{:>10}  {}  (median of its latest {} of {})\n", time_text(s.median_seconds), case_line(s.c),
                       s.runs, recent);
}

void print_tiers(const std::vector<tier_runtime>& tiers, bool as_json, std::ostream& out) {
  if (as_json) {
    json a = json::array();
    for (const tier_runtime& t : tiers) {
      json runs = json::array();
      for (const tier_runtime::run& r : t.runs)
        runs.push_back({{"at", run_json(r.at)}, {"wall_seconds", optional_json(r.wall_seconds)}, {"cases", r.cases},
                        {"failed", r.failed}});
      a.push_back({{"tier", t.tier}, {"runs", runs}, {"changes", changes_json(t.changes)}});
    }
    out << a.dump() << '\n';
    return;
  }
  if (tiers.empty()) out << "no run recorded a tier (opval run --tier NAME --history FILE)\n";
  for (const tier_runtime& t : tiers) {
    out << fmt::format("tier {}: {} run{}\n", t.tier, t.runs.size(), t.runs.size() == 1 ? "" : "s");
    for (const tier_runtime::run& r : t.runs)
      out << fmt::format("  run {:>4}  {}  commit {:<12}  {:>9}  {} cases, {} failed\n", r.at.run, r.at.started,
                         short_commit(r.at.commit), r.wall_seconds ? time_text(*r.wall_seconds) : "-", r.cases, r.failed);
    for (const change_point& c : t.changes)
      out << fmt::format("  wall time x{:.3f} from its {}th timed run: {} -> {} (p = {:.2g})\n", c.ratio, c.index + 1,
                         time_text(c.before), time_text(c.after), c.p_value);
  }
}

void print_runs(const std::vector<recorded_run>& runs, bool as_json, std::ostream& out) {
  if (as_json) {
    json a = json::array();
    for (const recorded_run& r : runs)
      a.push_back({{"at", run_json(r.at)}, {"kind", r.kind}, {"label", r.label}, {"host", r.host},
                   {"source", r.source}, {"wall_seconds", optional_json(r.wall_seconds)}, {"cases", r.cases},
                   {"failed", r.failed}});
    out << a.dump() << '\n';
    return;
  }
  if (runs.empty()) out << "no run recorded\n";
  for (const recorded_run& r : runs)
    out << fmt::format("run {:>4}  {}  {:<5}  commit {:<12}  tier {:<10}  {:>9}  {} cases, {} failed  {}\n", r.at.run,
                       r.at.started, r.kind, short_commit(r.at.commit), r.at.tier.empty() ? "-" : r.at.tier,
                       r.wall_seconds ? time_text(*r.wall_seconds) : "-", r.cases, r.failed, r.source);
}

}  // namespace

namespace {

std::string point_label(const run_point& at) {
  return at.commit.empty() ? fmt::format("run {}", at.run) : short_commit(at.commit);
}

trend_series series_of(const case_trend& t, const std::string& unit) {
  trend_series s{fmt::format("{} on {}", t.c.descriptor, t.c.backend), unit, {}};
  for (const change_point& c : t.changes)
    s.name += fmt::format(": x{:.2f} at commit {}", c.ratio, short_commit(t.points[c.index].at.commit));
  for (const trend_point& p : t.points) s.points.emplace_back(point_label(p.at), p.value);
  return s;
}

}  // namespace

std::vector<trend_series> history_trend_series(const std::string& database, std::size_t limit) {
  history_db db(database, false);
  std::vector<trend_series> out;
  std::vector<case_trend> trends = case_trends(db, {.limit = limit}, trend_metric::latency, true);
  const bool latency = !trends.empty();
  if (!latency) trends = case_trends(db, {.limit = limit}, trend_metric::case_time, true);
  for (const case_trend& t : trends) out.push_back(series_of(t, latency ? "median latency (s)" : "case time (s)"));
  for (const tier_runtime& t : tier_runtimes(db)) {
    trend_series s{fmt::format("tier {}: wall time", t.tier), "seconds", {}};
    for (const tier_runtime::run& r : t.runs)
      if (r.wall_seconds) s.points.emplace_back(point_label(r.at), *r.wall_seconds);
    if (s.points.size() >= 2) out.push_back(std::move(s));
  }
  return out;
}

const std::vector<std::string>& history_questions() {
  static const std::vector<std::string> q = {"failing", "flaky", "trends", "slowest", "tiers", "runs"};
  return q;
}

void answer_history(const history_request& r, std::ostream& out) {
  if (std::ranges::find(history_questions(), r.what) == history_questions().end())
    throw error(fmt::format("unknown history question '{}' (known: {})", r.what, fmt::join(history_questions(), " ")));
  history_db db(r.database, false);
  if (r.what == "failing") return print_failing(failing_cases(db, r.filter), r.json, out);
  if (r.what == "flaky") return print_flaky(flaky_cases(db, r.filter), r.json, out);
  if (r.what == "trends") return print_trends(case_trends(db, r.filter, r.metric, r.all), r.metric, r.json, out);
  if (r.what == "slowest") return print_slowest(slowest_cases(db, r.filter, r.recent), r.recent, r.json, out);
  if (r.what == "tiers") return print_tiers(tier_runtimes(db), r.json, out);
  print_runs(recorded_runs(db, r.filter.limit), r.json, out);
}

std::vector<std::int64_t> record_history_files(const std::string& database, const std::vector<std::string>& files,
                                               const run_identity& identity, std::ostream& out) {
  std::vector<std::int64_t> runs;
  history_db db(database, true);
  run_identity id = identity;
  if (id.commit.empty()) id.commit = detect_commit();
  for (const std::string& file : files) {
    run_identity of_file = id;
    of_file.source = file;
    const std::int64_t run = record_file(db, file, of_file);
    out << fmt::format("recorded '{}' as run {} (commit {})\n", file, run, short_commit(id.commit));
    runs.push_back(run);
  }
  return runs;
}

}  // namespace opval
