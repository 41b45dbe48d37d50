// conv2d: the feature table of its generated suites (docs/COVERAGE.md).
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"

namespace opval::ops::conv2d {

feature_table conv2d_spec::features() const {
  const std::vector<suite_feature> shapes = {{"geometry",
      {"ic=16 oc=16 ih=14 iw=14 kh=3 kw=3 sh=1 sw=1", "ic=32 oc=24 ih=7 iw=7 kh=1 kw=1 sh=1 sw=1 pt=0 pb=0 pl=0 pr=0",
      "ic=16 oc=32 ih=14 iw=14 kh=1 kw=1 pt=0 pb=0 pl=0 pr=0",
      "ic=4 oc=6 ih=12 iw=11 sh=1 sw=1 dh=2 dw=2 pt=2 pb=2 pl=2 pr=2",
      "ic=8 oc=12 ih=9 iw=9 sh=1 sw=1 g=4 pt=0 pb=0 pl=0 pr=0", "ic=16 oc=16 ih=10 iw=10 sh=1 sw=1 g=16",
      "ic=5 oc=7 ih=8 iw=9 kh=2 sh=1 sw=1 pt=0 pb=1 pl=2 pr=0",
      "ic=3 oc=8 ih=23 iw=23 kh=7 kw=7 pt=3 pb=3 pl=3 pr=3", "mb=2 ic=6 oc=10 ih=6 iw=5 kw=1 sh=1 sw=1 pl=0 pr=0",
      "ic=1 oc=1 ih=1 iw=1 kh=1 kw=1 sh=1 sw=1 pt=0 pb=0 pl=0 pr=0", "mb=0", "oc=0"}},
      {"layout", {"layout=nhwc"}}};
  return common_gemm::gemm_feature_table("ic=8 oc=16 ih=15 iw=13 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1", shapes, /*with_beta=*/false,
                                         [](const problem& p) { return p.get_int("ic") / p.get_int("g") * p.get_int("kh") * p.get_int("kw"); });
}

}  // namespace opval::ops::conv2d
