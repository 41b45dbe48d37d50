// avg_pool2d: the feature table of its generated suites (docs/COVERAGE.md).
#include "ops/avg_pool2d/avg_pool2d.hpp"
#include "ops/common_pool/pool_suite.hpp"

namespace opval::ops::avg_pool2d {

feature_table avg_pool2d_spec::features() const {
  std::vector<std::string> windows = pool::suite_windows("regression", false);
  for (const std::string& w : pool::empty_windows("regression")) windows.push_back(w);
  feature_table t = pool::pool_features(windows);
  t.features.push_back({"padding counted", {"count_include_pad=1"}});
  return t;
}

}  // namespace opval::ops::avg_pool2d
