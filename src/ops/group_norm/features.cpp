// group_norm: the feature table of its generated suites (docs/COVERAGE.md).
#include "ops/group_norm/group_norm.hpp"

namespace opval::ops::group_norm {

feature_table group_norm_spec::features() const {
  feature_table t;
  t.base = "shape=2x12x6x6 groups=4 eps=1e-05 affine=1 layout=nchw";
  std::vector<std::string> fills;
  for (const std::string& f : norm::suite_fills())
    if (f != "default") fills.push_back("fill=" + f);
  t.features = {{"groups and shape",
                 {"shape=2x8 groups=8", "shape=4x6 groups=3", "shape=2x16x9 groups=4", "shape=3x4x7x5 groups=4",
                  "shape=2x6x5x5 groups=1", "shape=1x32x8x8 groups=32", "shape=2x20x3x11 groups=5",
                  "shape=1x8x3x4x5 groups=2", "shape=1x10x1x13 groups=2", "shape=0x32x4x4 groups=8",
                  "shape=1x320x16x16 groups=32"}},
                {"layout", {"layout=nhwc"}},
                {"eps", {"eps=1e-12", "eps=0.1"}},
                {"affine", {"affine=0"}},
                {"fill", fills}};
  t.not_meaningful = [this](const problem& p) { return norm::norm_case_not_meaningful(kind(), geometry_of(p), p.fill); };
  return t;
}

}  // namespace opval::ops::group_norm
