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
      {"saturation", {"saturate=1", "saturate=1 saturate_inf=1"}},
      // ONNX Cast's round_mode, for an f8_e8m0 dst (validation refuses it for any other).
      {"e8m0 rounding", {"e8m0_round=up", "e8m0_round=down"}},
      {"contract option", {"denorm=ftz"}},
      {"scale", {"scale=0.3", "scale=100"}},
      // MX (an e8m0 scale per 32 elements) and NVFP4 (an e4m3 scale per 16, a tensor scale).
      {"block scaling", {"block=32 shape=4x64", "block=16 block_scale=f8_e4m3 shape=4x64"}},
  };
  t.not_meaningful = [](const problem& p) -> std::string {
    if (p.fill == "ties" && !(many_source_values(p.dt.src) && many_destination_values(p.dt.dst)))
      return fmt::format("too few values in {} or {} for a tie-breaking fill to be judged", to_string(p.dt.src),
                         to_string(p.dt.dst));
    if (p.get_real("scale") != 1.0 && !many_source_values(p.dt.src) && p.get_int("block") == 0)
      return fmt::format("too few values in {} for scaling to be judged", to_string(p.dt.src));
    if (p.dt.denorm == denormals::ftz && is_float(p.dt.dst) && traits(p.dt.dst).min_normal > 0x1p-6)
      return fmt::format("flushing {}'s wide subnormal range reads as a truncation bias", to_string(p.dt.dst));
    return "";
  };
  return t;
}

}  // namespace opval::ops::cast
