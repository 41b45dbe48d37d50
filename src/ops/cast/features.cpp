// cast: the feature table of its generated suites (docs/COVERAGE.md).
#include <fmt/format.h>

#include "ops/cast/cast.hpp"

namespace opval::ops::cast {

bool many_source_values(dtype src) { return traits(src).precision >= 8 || (!is_float(src) && src != dtype::boolean); }

bool many_destination_values(dtype dst) { return traits(dst).precision >= 8 || (!is_float(dst) && traits(dst).is_signed); }

feature_table cast_spec::features() const {
  feature_table t;
  t.base = "shape=1031";
  t.contracts = contracts();
  t.features = {
      {"shape", {"shape=1", "shape=scalar", "shape=37x41 stride_pad=3 step=2", "shape=3x5x7x11", "shape=65537", "shape=0x7"}},
      {"fill", {"fill=special", "fill=wide", "fill=large", "fill=uniform", "fill=ties"}},
      {"saturation", {"saturate=1"}},
      {"contract option", {"denorm=ftz"}},
      {"scale", {"scale=0.3", "scale=100"}},
  };
  t.not_meaningful = [](const problem& p) -> std::string {
    if (p.fill == "ties" && !(many_source_values(p.dt.src) && many_destination_values(p.dt.dst)))
      return fmt::format("too few values in {} or {} for a tie-breaking fill to be judged", to_string(p.dt.src),
                         to_string(p.dt.dst));
    if (p.get_real("scale") != 1.0 && !many_source_values(p.dt.src))
      return fmt::format("too few values in {} for scaling to be judged", to_string(p.dt.src));
    return "";
  };
  return t;
}

}  // namespace opval::ops::cast
