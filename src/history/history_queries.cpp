// The history's queries (history/history_queries.hpp).
#include "history/history_queries.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "bench/sample_summary.hpp"
#include "history/sqlite.hpp"
#include "opval/verdict.hpp"

namespace opval {
namespace {

// One result of a case in a run, with the run it belongs to.
struct result_row {
  run_point at;
  std::string state, reason;
  bool known = false;
  std::optional<double> seconds, median, ci_low, ci_high;
};

// A case's results, in run order (the runs' start times, then their ids).
struct case_results {
  case_key_fields c;
  std::vector<result_row> rows;
};

bool is_failure(const std::string& s) {
  const std::optional<state> st = parse_state(s);
  return st && opval::is_failure(*st);
}
bool is_verdict(const std::string& s) { return s == "PASSED" || is_failure(s); }

// Calls `each` with every case's results in runs of `kind` that the filter admits.
void for_each_case(history_db& db, std::string_view kind, const history_filter& f,
                   const std::function<void(case_results&)>& each) {
  sqlite::statement q = db.connection().prepare(R"sql(
SELECT c.id, c.op, c.backend, c.descriptor, c.seed, c.reference,
       u.id, u.commit_id, u.started, u.tier, r.state, r.reason, r.known_failure,
       r.seconds, r.median_seconds, r.ci_low, r.ci_high
FROM results r JOIN runs u ON u.id = r.run_id JOIN cases c ON c.id = r.case_id
WHERE u.kind = ?1 AND (?2 = '' OR c.op = ?2) AND (?3 = '' OR c.backend = ?3)
      AND (?4 = '' OR instr(c.descriptor, ?4) > 0)
ORDER BY c.id, u.started, u.id, r.position)sql");
  q.bind(1, kind).bind(2, f.op).bind(3, f.backend).bind(4, f.text);
  std::int64_t current = -1;
  case_results group;
  while (q.step()) {
    if (q.integer(0) != current) {
      if (current >= 0) each(group);
      current = q.integer(0);
      group = {{q.text(1), q.text(2), q.text(3), q.text(5), static_cast<std::uint64_t>(q.integer(4))}, {}};
    }
    group.rows.push_back({{q.integer(6), q.text(7), q.text(8), q.text(9)}, q.text(10), q.text(11), q.integer(12) != 0,
                          q.optional_real(13), q.optional_real(14), q.optional_real(15), q.optional_real(16)});
  }
  if (current >= 0) each(group);
}

template <class T>
void keep_first(std::vector<T>& rows, std::size_t limit) {
  if (limit > 0 && rows.size() > limit) rows.resize(limit);
}

// Newer first by start time, then id.
bool later(const run_point& a, const run_point& b) { return std::tie(a.started, a.run) > std::tie(b.started, b.run); }

std::optional<failing_case> failing_streak(const case_results& g) {
  std::vector<const result_row*> verdicts;
  for (const result_row& r : g.rows)
    if (is_verdict(r.state)) verdicts.push_back(&r);
  if (verdicts.empty() || !is_failure(verdicts.back()->state)) return std::nullopt;
  std::size_t first = verdicts.size() - 1;
  while (first > 0 && is_failure(verdicts[first - 1]->state)) --first;
  failing_case f{g.c, verdicts.back()->state, verdicts.back()->reason, verdicts.back()->known, verdicts[first]->at,
                 std::nullopt, static_cast<int>(verdicts.size() - first)};
  if (first > 0) f.last_pass = verdicts[first - 1]->at;
  return f;
}

}  // namespace

std::vector<failing_case> failing_cases(history_db& db, const history_filter& f) {
  std::vector<failing_case> out;
  for_each_case(db, "run", f, [&](case_results& g) {
    if (std::optional<failing_case> c = failing_streak(g)) out.push_back(std::move(*c));
  });
  std::ranges::stable_sort(out, [](const failing_case& a, const failing_case& b) { return later(a.since, b.since); });
  keep_first(out, f.limit);
  return out;
}

std::vector<flaky_case> flaky_cases(history_db& db, const history_filter& f) {
  std::vector<flaky_case> out;
  for_each_case(db, "run", f, [&](case_results& g) {
    std::map<std::string, flaky_case> by_commit;
    for (const result_row& r : g.rows) {
      if (r.at.commit.empty() || !is_verdict(r.state)) continue;
      flaky_case& c = by_commit.try_emplace(r.at.commit, flaky_case{g.c, r.at.commit}).first->second;
      ++(is_failure(r.state) ? c.failed : c.passed);
      if (std::ranges::find(c.states, r.state) == c.states.end()) c.states.push_back(r.state);
    }
    for (auto& [commit, c] : by_commit)
      if (c.states.size() > 1) out.push_back(std::move(c));
  });
  std::ranges::stable_sort(out, [](const flaky_case& a, const flaky_case& b) {
    return std::min(a.passed, a.failed) > std::min(b.passed, b.failed);
  });
  keep_first(out, f.limit);
  return out;
}

std::vector<case_trend> case_trends(history_db& db, const history_filter& f, trend_metric metric, bool all,
                                    const change_point_options& o) {
  std::vector<case_trend> out;
  for_each_case(db, metric == trend_metric::latency ? "bench" : "run", f, [&](case_results& g) {
    case_trend t{g.c, {}, {}};
    for (const result_row& r : g.rows) {
      const std::optional<double> v = metric == trend_metric::latency ? r.median : r.seconds;
      if (v) t.points.push_back({r.at, *v, r.ci_low, r.ci_high});
    }
    std::vector<double> values;
    for (const trend_point& p : t.points) values.push_back(p.value);
    t.changes = find_change_points(values, o);
    if (t.points.size() >= 2 && (all || !t.changes.empty())) out.push_back(std::move(t));
  });
  // The latest change first; trends without one after, in case order.
  const auto latest = [](const case_trend& t) -> const run_point* {
    return t.changes.empty() ? nullptr : &t.points[t.changes.back().index].at;
  };
  std::ranges::stable_sort(out, [&](const case_trend& a, const case_trend& b) {
    const run_point *x = latest(a), *y = latest(b);
    if (!x || !y) return x && !y;
    return later(*x, *y);
  });
  keep_first(out, f.limit);
  return out;
}

std::vector<slow_case> slowest_cases(history_db& db, const history_filter& f, int recent) {
  std::vector<slow_case> out;
  for_each_case(db, "run", f, [&](case_results& g) {
    std::vector<double> times;
    for (auto it = g.rows.rbegin(); it != g.rows.rend() && static_cast<int>(times.size()) < recent; ++it)
      if (it->seconds) times.push_back(*it->seconds);
    if (!times.empty()) out.push_back({g.c, median_of(times), static_cast<int>(times.size())});
  });
  std::ranges::stable_sort(out, [](const slow_case& a, const slow_case& b) { return a.median_seconds > b.median_seconds; });
  keep_first(out, f.limit);
  return out;
}

std::vector<tier_runtime> tier_runtimes(history_db& db, const change_point_options& o) {
  sqlite::statement q = db.connection().prepare(
      "SELECT tier, id, commit_id, started, wall_seconds, cases, failed FROM runs WHERE tier != '' "
      "ORDER BY tier, started, id");
  std::vector<tier_runtime> out;
  while (q.step()) {
    if (out.empty() || out.back().tier != q.text(0)) out.push_back({q.text(0), {}, {}});
    out.back().runs.push_back({{q.integer(1), q.text(2), q.text(3), q.text(0)}, q.optional_real(4), q.integer(5), q.integer(6)});
  }
  for (tier_runtime& t : out) {
    std::vector<double> walls;
    for (const tier_runtime::run& r : t.runs)
      if (r.wall_seconds) walls.push_back(*r.wall_seconds);
    t.changes = find_change_points(walls, o);
  }
  return out;
}

std::vector<recorded_run> recorded_runs(history_db& db, std::size_t limit) {
  sqlite::statement q = db.connection().prepare(
      "SELECT id, commit_id, started, tier, kind, label, host, source, wall_seconds, cases, failed FROM runs "
      "ORDER BY started DESC, id DESC LIMIT ?1");
  q.bind(1, limit == 0 ? std::int64_t{-1} : static_cast<std::int64_t>(limit));
  std::vector<recorded_run> out;
  while (q.step())
    out.push_back({{q.integer(0), q.text(1), q.text(2), q.text(3)}, q.text(4), q.text(5), q.text(6), q.text(7),
                   q.optional_real(8), q.integer(9), q.integer(10)});
  return out;
}

std::map<std::string, case_history> case_histories(history_db& db, int recent) {
  std::map<std::string, case_history> out;
  for_each_case(db, "run", {.limit = 0}, [&](case_results& g) {
    case_history h;
    std::vector<double> times;
    std::set<std::string> passed_at, failed_at;
    int verdicts_seen = 0;
    for (auto it = g.rows.rbegin(); it != g.rows.rend(); ++it) {
      if (it->seconds && static_cast<int>(times.size()) < recent) times.push_back(*it->seconds);
      if (!is_verdict(it->state)) continue;
      const bool failed = is_failure(it->state);
      if (verdicts_seen == 0) h.failed_last = failed;
      if (failed && verdicts_seen < recent) ++h.recent_failures;
      if (failed && h.failed_at.empty()) h.failed_at = it->at.commit.empty() ? "(no commit)" : it->at.commit;
      ++verdicts_seen;
      if (!it->at.commit.empty()) (failed ? failed_at : passed_at).insert(it->at.commit);
    }
    h.flaky = std::ranges::any_of(failed_at, [&](const std::string& c) { return passed_at.contains(c); });
    if (!times.empty()) h.seconds = median_of(times);
    out.emplace(history_case_key(g.c), std::move(h));
  });
  return out;
}

}  // namespace opval
