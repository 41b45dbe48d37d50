#pragma once
// What `opval history` answers from the run history (history/history.hpp, docs/FLEET.md):
// since which commit a case fails, which cases are flaky, how each case's performance moved
// (with change points), the slowest cases, the tiers' runtimes over time; and, for a run
// choosing its cases (core/case_priority.hpp), each case's recent verdicts and cost.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/change_points.hpp"
#include "history/history.hpp"

namespace opval {

/// Which cases a query looks at: those whose op, backend equal these and whose descriptor
/// contains `text` (each when not empty); at most `limit` rows answered (0: all).
struct history_filter {
  std::string op, backend, text;
  std::size_t limit = 20;
};

/// A run as the queries name it.
struct run_point {
  std::int64_t run = 0;
  std::string commit, started, tier;
};

/// A case whose latest verdict is a failure, and since when.
struct failing_case {
  case_key_fields c;
  std::string state, reason;  ///< the latest result's
  bool known = false;         ///< listed as a known failure in its latest run
  run_point since;            ///< the first run of the failures that continue to the latest
  std::optional<run_point> last_pass;  ///< the last run it passed before that
  int failing_runs = 0;       ///< the runs since, all failing
};
/// Newest regression first. (Skipped and unimplemented results are no verdict: passed over.)
std::vector<failing_case> failing_cases(history_db& db, const history_filter& f);

/// A case with different verdicts at the same commit (and so the same inputs: the case key
/// holds the problem and its seed).
struct flaky_case {
  case_key_fields c;
  std::string commit;
  int passed = 0, failed = 0;  ///< its results at that commit
  std::vector<std::string> states;  ///< the distinct states seen there, in order of first appearance
};
/// The most mixed first (the smaller of passed and failed), one row per case and commit.
std::vector<flaky_case> flaky_cases(history_db& db, const history_filter& f);

/// Which measurement a trend follows.
enum class trend_metric {
  latency,    ///< `opval bench`'s median per run (seconds)
  case_time,  ///< `opval run`'s whole time of the case per run (seconds): filling, kernel, reference, judging
};

struct trend_point {
  run_point at;
  double value = 0;
  std::optional<double> ci_low, ci_high;  ///< latency: the run's confidence interval
};

struct case_trend {
  case_key_fields c;
  std::vector<trend_point> points;     ///< in run order
  std::vector<change_point> changes;   ///< indices into points
};
/// The trends with a change point (with `all`, every case with two points or more), the
/// latest change first.
std::vector<case_trend> case_trends(history_db& db, const history_filter& f, trend_metric metric, bool all,
                                    const change_point_options& o = {});

/// A case's recorded time: the median over its latest `recent` results in runs.
struct slow_case {
  case_key_fields c;
  double median_seconds = 0;
  int runs = 0;
};
/// The slowest first.
std::vector<slow_case> slowest_cases(history_db& db, const history_filter& f, int recent = 5);

/// A tier's runs over time, and the changes of its wall time.
struct tier_runtime {
  std::string tier;
  struct run {
    run_point at;
    std::optional<double> wall_seconds;
    std::int64_t cases = 0, failed = 0;
  };
  std::vector<run> runs;
  std::vector<change_point> changes;  ///< of the runs with a wall time, indices into those
};
std::vector<tier_runtime> tier_runtimes(history_db& db, const change_point_options& o = {});

/// A run as `opval history runs` lists it.
struct recorded_run {
  run_point at;
  std::string kind, label, host, source;
  std::optional<double> wall_seconds;
  std::int64_t cases = 0, failed = 0;
};
/// The latest `limit` runs (0: all), newest first.
std::vector<recorded_run> recorded_runs(history_db& db, std::size_t limit);

/// What a run choosing its cases needs to know of one (core/case_priority.hpp).
struct case_history {
  std::optional<double> seconds;  ///< the median of its latest recorded times in runs
  bool failed_last = false;       ///< its latest verdict is a failure
  int recent_failures = 0;        ///< failures among its latest `recent` verdicts
  std::string failed_at;          ///< the commit of its latest failure
  bool flaky = false;             ///< different verdicts at one commit, ever
};
/// By history_case_key, every case with a verdict or time in a run of the history.
std::map<std::string, case_history> case_histories(history_db& db, int recent = 5);

}  // namespace opval
