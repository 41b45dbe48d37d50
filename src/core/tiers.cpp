// The tiers (core/tiers.hpp).
#include "core/tiers.hpp"

#include <algorithm>

namespace opval {

const std::vector<tier_preset>& tier_presets() {
  static const std::vector<tier_preset> tiers = {
      {"smoke", "smoke", 1, 60, "every commit: about a minute"},
      {"regression", "regression", 1, 600, "every merge: about ten minutes"},
      // The generated suite covers every pair of feature values; more seeds give each case
      // other data, an order of magnitude more cases than the regression suite.
      {"nightly", "generated", 3, 0, "every night: the generated suites at three seeds, every case"},
  };
  return tiers;
}

tier_choice apply_tier(std::string_view tier, const std::string& tag, int seeds, const std::string& budget) {
  const tier_preset* t = find_tier(tier);
  tier_choice c{tag, seeds, budget};
  if (c.tag.empty()) c.tag = t ? std::string(t->tag) : "smoke";
  if (c.seeds == 0) c.seeds = t ? t->seeds : 1;
  if (c.budget.empty() && t && t->budget_seconds > 0) c.budget = std::to_string(t->budget_seconds);
  return c;
}

const tier_preset* find_tier(std::string_view name) {
  const auto& t = tier_presets();
  const auto it = std::ranges::find(t, name, &tier_preset::name);
  return it == t.end() ? nullptr : &*it;
}

}  // namespace opval
