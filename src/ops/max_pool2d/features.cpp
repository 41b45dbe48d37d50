// max_pool2d: the feature table of its generated suites (docs/COVERAGE.md).
#include "ops/common_pool/pool_suite.hpp"
#include "ops/max_pool2d/max_pool2d.hpp"

namespace opval::ops::max_pool2d {

feature_table max_pool2d_spec::features() const {
  std::vector<std::string> windows = pool::suite_windows("regression", true);
  for (const std::string& w : pool::empty_windows("regression")) windows.push_back(w);
  feature_table t = pool::pool_features(windows);
  t.not_meaningful = [](const problem& p) -> std::string {
    if (p.fill == "special" && !is_float(p.dt.src)) return "an integer type holds no special values";
    return "";
  };
  return t;
}

}  // namespace opval::ops::max_pool2d
