// The cases of a run (core/run_cases.hpp).
#include "core/run_cases.hpp"

#include <algorithm>

#include "core/case_selection.hpp"
#include "core/changed_paths.hpp"
#include "core/shards.hpp"
#include "history/history.hpp"
#include "history/history_queries.hpp"
#include "opval/op_spec.hpp"

namespace opval {
namespace {

// Seconds per unit of estimated_case_cost on sim (its fit: 0.65 ms for the fixed 5.6e5 units).
constexpr double seconds_per_cost_unit = 0.65e-3 / 5.6e5;

std::vector<planned_case> every_case(const std::vector<located_problem>& problems,
                                     const std::vector<session_backend>& backends, const case_plan_inputs& in) {
  std::vector<planned_case> out;
  out.reserve(problems.size() * backends.size() * static_cast<std::size_t>(in.seeds));
  for (const located_problem& lp : problems)
    for (int s = 0; s < in.seeds; ++s)
      for (const session_backend& sb : backends) out.push_back({&lp, &sb, in.seed + static_cast<std::uint64_t>(s), {}});
  return out;
}

std::string key_of(const planned_case& c) {
  return history_case_key(case_key_fields{std::string(c.lp->prob.op()), c.sb->b->name(), c.lp->prob.to_string(), "", c.seed});
}

// The recorded times where the history has them; the others estimated, scaled up (never down)
// by the recorded cases' total time over their estimated total: a slower machine or backend
// than the fit's makes every estimate longer, while a history of tiny cases, which take a
// quarter of their estimate, must not shrink the others' (an overrun of the budget).
std::vector<double> expected_seconds(const std::vector<planned_case>& cases, const std::vector<std::string>& keys,
                                     const std::map<std::string, case_history>& history,
                                     std::vector<bool>& measured) {
  std::vector<double> estimate(cases.size());
  measured.assign(cases.size(), false);
  std::vector<double> out(cases.size());
  double recorded = 0, recorded_estimate = 0;
  int recorded_cases = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    estimate[i] = estimated_case_cost(cases[i].lp->prob) * seconds_per_cost_unit;
    if (const auto h = history.find(keys[i]); h != history.end() && h->second.seconds) {
      out[i] = *h->second.seconds, measured[i] = true;
      recorded += out[i], recorded_estimate += estimate[i], ++recorded_cases;
    }
  }
  const double scale = recorded_cases >= 5 ? std::max(1.0, recorded / recorded_estimate) : 1.0;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (!measured[i]) out[i] = estimate[i] * scale;
  return out;
}

std::vector<std::string> op_names() {
  std::vector<std::string> out;
  for (const op_spec* op : all_ops()) out.emplace_back(op->name());
  return out;
}

selection_inputs inputs_for_selection(const case_plan_inputs& in, const std::map<std::string, case_history>& history,
                                      const std::vector<session_backend>& backends) {
  selection_inputs s{.budget_seconds = in.budget_seconds, .sample_key = in.commit};
  for (const auto& [key, h] : history)
    if (h.failed_last || h.recent_failures > 0 || h.flaky)
      s.history.emplace(key, candidate_history{h.failed_last, h.recent_failures, h.failed_at, h.flaky});
  if (!in.changes.empty()) {
    std::vector<std::string> names = backend_names();
    for (const session_backend& sb : backends)
      if (std::ranges::find(names, sb.b->name()) == names.end()) names.push_back(sb.b->name());
    touched_names t = touched_by(changed_paths(in.changes), op_names(), names);
    s.changed_ops = std::move(t.ops), s.changed_backends = std::move(t.backends);
  }
  return s;
}

}  // namespace

case_plan plan_run_cases(const std::vector<located_problem>& problems, const std::vector<session_backend>& backends,
                         const case_plan_inputs& in) {
  case_plan plan{every_case(problems, backends, in), {}, {}, {}};
  std::vector<std::string> keys;
  for (const planned_case& c : plan.cases) keys.push_back(key_of(c));
  const std::map<std::string, case_history> history =
      in.history ? case_histories(*in.history) : std::map<std::string, case_history>{};
  std::vector<bool> measured;
  plan.seconds = expected_seconds(plan.cases, keys, history, measured);
  if (!(in.budget_seconds > 0)) return plan;

  std::vector<selection_candidate> candidates;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const planned_case& c = plan.cases[i];
    const std::string descriptor = c.lp->prob.to_string();
    candidates.push_back({keys[i], std::string(c.lp->prob.op()), c.sb->b->name(), descriptor, c.seed, plan.seconds[i], measured[i],
                          case_features(descriptor, c.sb->b->name())});
  }
  const case_selection chosen = select_cases(candidates, inputs_for_selection(in, history, backends));
  case_plan out{{}, {}, {selection_json(chosen, candidates)}, selection_summary(chosen, candidates)};
  for (std::size_t k = 0; k < chosen.order.size(); ++k) {
    planned_case c = plan.cases[chosen.order[k]];
    c.choice = chosen.choices[k];
    out.cases.push_back(c);
    out.seconds.push_back(plan.seconds[chosen.order[k]]);
  }
  return out;
}

}  // namespace opval
