#pragma once
// The cases of a run (opval/session.hpp's run_session): each problem on each backend at each
// seed, in the run's order; with a time budget, those chosen to fit it, most important first
// (core/case_selection.hpp); and what each is expected to cost, which shards balance on.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opval/runner.hpp"
#include "opval/session.hpp"

namespace opval {

class history_db;

/// One case to run.
struct planned_case {
  const located_problem* lp = nullptr;
  const session_backend* sb = nullptr;
  std::uint64_t seed = 1;
  std::optional<case_choice> choice;  ///< why a budget chose it
};

struct case_plan_inputs {
  std::uint64_t seed = 1;  ///< the first seed
  int seeds = 1;           ///< each case at seed, seed + 1, ...
  double budget_seconds = 0;  ///< 0: every case, in order
  history_db* history = nullptr;  ///< the history, for recorded costs and verdicts (may be null)
  std::string changes;     ///< --changes: a git revision or a file of paths ("" none)
  std::string commit;      ///< the slow cases' sample rotates with it
};

struct case_plan {
  std::vector<planned_case> cases;        ///< in the order to run them
  std::vector<double> seconds;            ///< each one's expected time
  std::vector<std::string> header_lines;  ///< the journal's `{"selection": ...}` line, with a budget
  std::string note;                       ///< the console's line about the choice ("" without a budget)
};

/// The run's cases: each problem, at each seed, on each backend (backends innermost, so a
/// problem's backends run on the same inputs one after the other). With a budget, only those
/// select_cases chooses, in its order. Expected times: the history's median for a case it
/// recorded, else estimated_case_cost in seconds by the fit on sim of docs/FLEET.md, scaled up
/// (never down) by the recorded cases' total over their estimated total when the history holds
/// 5 or more.
case_plan plan_run_cases(const std::vector<located_problem>& problems, const std::vector<session_backend>& backends,
                         const case_plan_inputs& in);

}  // namespace opval
