#pragma once
// Choosing the cases of a run with a time budget (`opval run --budget 10m`, docs/FLEET.md):
// the cases that matter most first — those that failed recently, the flaky ones, those of the
// ops and backends a change touches — then the cases that cover the most features no chosen
// case covers yet per second, a rotating sample of the slow ones, and the rest while time is
// left; with what was left out and the coverage lost.
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "opval/runner.hpp"

namespace opval {

/// A case the run could choose.
struct selection_candidate {
  std::string key;       ///< the history's case key (history_case_key)
  std::string op, backend, descriptor;
  std::uint64_t seed = 1;
  double seconds = 0;    ///< its expected time: recorded, or estimated
  bool measured = false; ///< `seconds` is the history's
  std::vector<std::string> features;  ///< what it covers (case_features)
};

/// What the history says of a candidate (history_queries.hpp's case_history, by key).
struct candidate_history {
  bool failed_last = false;
  int recent_failures = 0;
  std::string failed_at;  ///< the commit of its latest failure
  bool flaky = false;
};

struct selection_inputs {
  double budget_seconds = 0;  ///< > 0
  std::map<std::string, candidate_history> history;  ///< by key; empty without a history
  std::set<std::string> changed_ops, changed_backends;
  /// What the sample of slow cases rotates with (the commit): another commit, another sample.
  std::string sample_key;
  /// A case is slow when it would take more than this share of the budget; at most
  /// `slow_share` of the budget goes to the sample of slow ones before the others fill it.
  double slow_fraction = 0.01, slow_share = 0.1;
};

/// The chosen cases, in the order to run them, and what was left out.
struct case_selection {
  std::vector<std::size_t> order;   ///< indices of the candidates, most important first
  std::vector<case_choice> choices; ///< why each of `order` was chosen (rank = its place)
  std::vector<std::size_t> left_out;  ///< indices, in the candidates' order
  double budget_seconds = 0, chosen_seconds = 0, left_out_seconds = 0;
  /// How many were chosen for each reason: failed, flaky, changed, coverage, slow sample, fill.
  std::map<std::string, int> chosen_for;
  std::size_t features = 0;                 ///< distinct features of all candidates
  std::vector<std::string> features_lost;   ///< those no chosen case covers
};

/// Chooses the candidates that fit `in.budget_seconds` (their `seconds` summed):
/// 1. failed at their latest run, then failed among their latest runs, then flaky, then of a
///    changed op or backend — each group the most failures first, then cheapest first;
/// 2. greedily the case covering the most features not yet covered per second (ties: the
///    earlier case), until no case adds one;
/// 3. a sample of the slow cases (> slow_fraction of the budget each), in an order rotated by
///    hashing sample_key with each key, up to slow_share of the budget;
/// 4. the other cases in their order, then the rest of the slow sample, while they fit.
/// A case that does not fit is passed over for cheaper ones. Deterministic: every shard of a
/// run chooses the same.
case_selection select_cases(std::span<const selection_candidate> candidates, const selection_inputs& in);

/// The features a case covers, from its descriptor: its op and backend, the op with its
/// contract, each attribute (`op key=value`), and each size as its power-of-two class
/// (`matmul k~2^10`; a shape by its rank and element count's class).
std::vector<std::string> case_features(const std::string& descriptor, const std::string& backend);

/// The selection as the console says it: chosen, left out, estimated times, coverage lost.
std::string selection_summary(const case_selection& s, std::span<const selection_candidate> candidates);
/// The journal's header line `{"selection": {...}}`: the budget, the counts and times, the
/// features lost, and every case left out.
std::string selection_json(const case_selection& s, std::span<const selection_candidate> candidates);

/// "10m", "90s", "1h30m", "2.5h", "600" (seconds) as seconds; 0 for "0". Throws opval::error
/// naming the text otherwise.
double parse_budget(const std::string& text);

}  // namespace opval
