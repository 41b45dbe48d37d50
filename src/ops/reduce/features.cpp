// reduce: the feature table of its generated suites (docs/COVERAGE.md).
#include <fmt/format.h>

#include "ops/reduce/reduce.hpp"

namespace opval::ops::reduce {

feature_table reduce_spec::features() const {
  feature_table t;
  t.base = "shape=13x17 axes=1";
  t.features = {{"shape and axes",
                 {"shape=1x1 axes=1", "shape=7 axes=0", "shape=13x17 axes=0", "shape=5x6x7 axes=1", "shape=5x6x7 axes=0x2",
                  "shape=5x6x7 axes=0x1x2", "shape=3x1000 axes=1", "shape=1000x3 axes=0", "shape=9x31x5 axes=1x2",
                  "shape=64x33x3 axes=0x2", "shape=2x3x4x5 axes=1x3", "shape=97x1 axes=0", "shape=256x4096 axes=1",
                  "shape=2x0x4 axes=1", "shape=0x5 axes=1"}},
                {"kind", {"kind=mean", "kind=max"}},
                {"keepdims", {"keepdims=1"}},
                {"fill",
                 {"fill=positive", "fill=wide", "fill=cancel", "fill=large", "fill=uniform", "fill=exact", "fill=special"}}};
  t.not_meaningful = [](const problem& p) -> std::string {
    const std::int64_t n = geometry_of(params_of(p)).n;
    if (p.dt.acc == dtype::f16 && n > 500) return fmt::format("f16 sums of {} terms have no meaningful bound", n);
    if (p.fill == "special" && !is_float(p.dt.src)) return "an integer type holds no special values";
    // Special values in most outputs make the output constant NaN or Inf (MISTRUSTED).
    if (p.fill == "special" && n > 500) return fmt::format("special values flood sums of {} terms", n);
    return "";
  };
  return t;
}

}  // namespace opval::ops::reduce
