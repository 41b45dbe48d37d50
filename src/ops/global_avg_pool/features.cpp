// global_avg_pool: the feature table of its generated suites (docs/COVERAGE.md).
#include "ops/common_pool/pool_suite.hpp"
#include "ops/global_avg_pool/global_avg_pool.hpp"

namespace opval::ops::global_avg_pool {

feature_table global_avg_pool_spec::features() const {
  feature_table t = pool::pool_features({"mb=2 c=3 ih=7 iw=7", "mb=1 c=8 ih=1 iw=1", "mb=1 c=4 ih=5 iw=9",
                                         "mb=1 c=512 ih=7 iw=7", "mb=2 c=16 ih=14 iw=14", "mb=1 c=4 ih=56 iw=56",
                                         "mb=3 c=5 ih=1 iw=33", "mb=0 c=3 ih=7 iw=7", "mb=2 c=0 ih=5 iw=5"});
  t.not_meaningful = [this](const problem& p) -> std::string {
    if (p.dt.acc == dtype::f16 && window_of(p).taps() >= 1024)
      return "f16 sums of 1024 and more elements have no meaningful bound";
    return "";
  };
  return t;
}

}  // namespace opval::ops::global_avg_pool
