// The coverage of generated suites, for the console and as JSON (opval/session.hpp,
// print_coverage and coverage_json; docs/COVERAGE.md).
#include <algorithm>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "opval/session.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

using detail::wrap;

std::string plural(int n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// The distinct reasons of `reasons`, most frequent first, at most `keep` of them with their
/// counts, then how many other reasons there were.
std::string grouped_reasons(const std::vector<std::string>& reasons, std::size_t keep) {
  std::map<std::string, int> counts;
  for (const std::string& r : reasons) ++counts[r];
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (std::size_t i = 0; i < sorted.size() && i < keep; ++i)
    out += fmt::format("{}{}x \"{}\"", out.empty() ? "" : "; ", sorted[i].second, sorted[i].first);
  if (sorted.size() > keep) out += fmt::format("; {} other reasons", sorted.size() - keep);
  return out;
}

struct totals {
  int contracts_run = 0, cases = 0, pairs = 0, covered = 0, refused = 0, inapplicable = 0, over_budget = 0;
  std::vector<std::string> contract_refusals;
};

totals totals_of(const op_coverage& c) {
  totals t;
  for (const contract_coverage& k : c.contracts) {
    if (k.refused.empty()) ++t.contracts_run;
    else t.contract_refusals.push_back(k.refused);
    t.cases += k.cases;
    t.pairs += k.pairs;
    t.covered += k.pairs_covered;
    t.refused += k.pairs_refused;
    t.inapplicable += k.pairs_inapplicable;
    t.over_budget += k.pairs_over_budget;
  }
  return t;
}

/// Why a value never ran alone (or, verbose, where it did).
std::string value_line(const value_coverage& v, int contracts_run, bool verbose) {
  const std::string name = fmt::format("{} {}", v.feature, v.value);
  if (!v.alone.empty()) {
    // Refused somewhere is the kernel's gap; not applicable somewhere is the op's (verbose only).
    if (!verbose && v.refused.empty()) return "";
    std::string line = fmt::format("{}: alone at {} of {}, in {}", name, v.alone.size(), contracts_run,
                                   plural(v.cases, "case", "cases"));
    std::vector<std::string> why;
    for (const auto& r : v.refused) why.push_back(r.second);
    if (!why.empty()) line += fmt::format("; refused at {}: {}", v.refused.size(), grouped_reasons(why, 2));
    return line;
  }
  std::vector<std::string> why;
  for (const auto& r : v.refused) why.push_back("refused: " + r.second);
  for (const auto& r : v.inapplicable) why.push_back("not applicable: " + r.second);
  return fmt::format("{}: never ran ({})", name, why.empty() ? "no contract ran" : grouped_reasons(why, 2));
}

void print_one(const op_coverage& c, bool verbose, int width, std::ostream& out) {
  const totals t = totals_of(c);
  const int n_values = static_cast<int>(c.values.size());
  out << wrap(fmt::format("{} on {}: {}, {} of {} contracts, {} of {} values alone, {} of {} pairs", c.op, c.backend,
                          plural(t.cases, "case", "cases"), t.contracts_run, c.contracts.size(), c.values_covered(),
                          n_values, t.covered, t.pairs),
              width, 4, 2);
  if (!t.contract_refusals.empty())
    out << wrap(fmt::format("contracts refused: {}", grouped_reasons(t.contract_refusals, verbose ? 100 : 3)), width,
                6, 4);
  if (t.contracts_run == 0) return;
  for (const value_coverage& v : c.values)
    if (const std::string line = value_line(v, t.contracts_run, verbose); !line.empty()) out << wrap(line, width, 6, 4);
  std::vector<std::string> pairs;
  if (t.refused) pairs.push_back(fmt::format("{} refused together", t.refused));
  if (t.inapplicable) pairs.push_back(fmt::format("{} no valid problem together", t.inapplicable));
  if (t.over_budget) pairs.push_back(fmt::format("{} over the budget (--suite-budget)", t.over_budget));
  if (!pairs.empty()) out << wrap(fmt::format("pairs not covered: {}", fmt::join(pairs, ", ")), width, 6, 4);
}

}  // namespace

void print_coverage(const std::vector<op_coverage>& coverage, bool verbose, int width, std::ostream& out) {
  if (coverage.empty()) return;
  out << fmt::format("\nCoverage of the generated suite (seed {}, at most {} cases per op and contract):\n",
                     coverage.front().seed, coverage.front().budget);
  for (const op_coverage& c : coverage) print_one(c, verbose, width, out);
}

std::string coverage_json(const op_coverage& c) {
  using nlohmann::json;
  json contracts = json::array();
  for (const contract_coverage& k : c.contracts)
    contracts.push_back({{"contract", k.contract},
                         {"refused", k.refused},
                         {"cases", k.cases},
                         {"pairs", k.pairs},
                         {"pairs_covered", k.pairs_covered},
                         {"pairs_refused", k.pairs_refused},
                         {"pairs_inapplicable", k.pairs_inapplicable},
                         {"pairs_over_budget", k.pairs_over_budget}});
  json values = json::array();
  const auto reasons = [](const std::vector<std::pair<std::string, std::string>>& v) {
    json o = json::object();
    for (const auto& [contract, why] : v) o[contract] = why;
    return o;
  };
  for (const value_coverage& v : c.values)
    values.push_back({{"feature", v.feature},
                      {"value", v.value},
                      {"alone", v.alone},
                      {"cases", v.cases},
                      {"refused", reasons(v.refused)},
                      {"inapplicable", reasons(v.inapplicable)}});
  const json record = {{"coverage",
                        {{"op", c.op},
                         {"backend", c.backend},
                         {"seed", c.seed},
                         {"budget", c.budget},
                         {"contracts", contracts},
                         {"values", values}}}};
  return record.dump();
}

}  // namespace opval
