#pragma once
// The tiers a validation team runs opval in (`opval run --tier NAME`, docs/FLEET.md): each a
// suite, its seeds and a time budget, for when it runs.
#include <string>
#include <string_view>
#include <vector>

namespace opval {

struct tier_preset {
  std::string_view name;
  std::string_view tag;     ///< the suite (--tag)
  int seeds = 1;            ///< each case at this many seeds (--seeds)
  double budget_seconds = 0;  ///< --budget (0: every case)
  std::string_view when;    ///< what it is for
};

/// smoke (every commit, a minute), regression (every merge, ten minutes), nightly (the
/// generated suites at three seeds, no budget).
const std::vector<tier_preset>& tier_presets();

/// The preset named `name`; null for another name (a tier of the caller's own: a label only).
const tier_preset* find_tier(std::string_view name);

/// A run's suite tag, seeds and budget: those given (tag "", seeds 0 and budget "" are not
/// given), else the tier's, else smoke, 1 and none ("").
struct tier_choice {
  std::string tag;
  int seeds = 1;
  std::string budget;
};
tier_choice apply_tier(std::string_view tier, const std::string& tag, int seeds, const std::string& budget);

}  // namespace opval
