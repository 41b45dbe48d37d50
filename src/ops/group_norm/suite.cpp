// group_norm's suites: groups of one channel (instance norm) to all channels, 0 to 3 spatial
// dims, NCHW and channels-last, three eps, with and without affine, every fill, in each
// contract; then the shapes of models that use it (Stable Diffusion's UNet and VAE: 32 groups).
#include <cstdint>

#include <fmt/format.h>

#include "ops/group_norm/group_norm.hpp"

namespace opval::ops::group_norm {

std::vector<std::string> group_norm_spec::suite(std::string_view tag) const {
  const std::vector<std::string> contracts = norm::suite_contracts();
  const std::string constant_rows(norm::constant_rows_fill);
  std::vector<std::string> lines;
  auto add = [&](const std::string& shape, std::int64_t groups, double eps, bool affine, const std::string& layout,
                 const std::string& dt, const std::string& fill) {
    lines.push_back(fmt::format("group_norm shape={} groups={} eps={} affine={} layout={} dt={} fill={}", shape, groups,
                                eps, affine ? 1 : 0, layout, dt, fill));
  };
  if (tag == "smoke") {
    for (const auto& dt : contracts) {
      add("2x32x4x4", 8, 1e-5, true, "nchw", dt, "default");
      add("2x12x5x3", 3, 1e-5, true, "nhwc", dt, "default");
      add("3x6", 2, 1e-5, true, "nchw", dt, "default");
      add("2x4x3x5", 4, 0.1, true, "nhwc", dt, constant_rows);
      add("1x16x7x7", 1, 1e-12, false, "nchw", dt, "cancel");
    }
    return lines;
  }
  if (tag != "regression") return lines;
  // One channel per group (instance norm), all channels in one group, rows of one element
  // (C = groups, no spatial dim), 1-D and 3-D spatial extents, odd sizes.
  struct shape_case {
    std::string shape;
    std::int64_t groups;
    bool one_element_rows = false;  ///< always beta (or 0): only affine makes it testable
  };
  const std::vector<shape_case> shapes{
      {"2x8", 8, true}, {"4x6", 3},        {"2x16x9", 4},     {"3x4x7x5", 4},  {"2x6x5x5", 1},
      {"1x32x8x8", 32}, {"2x20x3x11", 5},  {"1x8x3x4x5", 2},  {"2x64x4x4", 32}, {"1x10x1x13", 2}};
  const std::vector<double> eps_values{1e-5, 1e-12, 0.1};
  const std::vector<std::string> fills = norm::suite_fills();
  std::size_t i = 0;
  for (const auto& dt : contracts) {
    for (const auto& s : shapes)
      for (const char* layout : {"nchw", "nhwc"})
        for (bool affine : {true, false}) {
          if (!affine && s.one_element_rows) continue;
          const double eps = eps_values[(i / fills.size()) % eps_values.size()];
          add(s.shape, s.groups, eps, affine, layout, dt, fills[i % fills.size()]);
          ++i;
        }
    for (const auto& fill : fills) add("2x12x6x6", 4, 1e-5, true, "nhwc", dt, fill);
    // Stable Diffusion's UNet and VAE blocks: 32 groups over 320 and 128 channels.
    add("1x320x16x16", 32, 1e-5, true, "nchw", dt, "default");
    add("1x128x32x32", 32, 1e-6, true, "nhwc", dt, "default");
    add("0x32x4x4", 8, 1e-5, true, "nchw", dt, "default");  // an empty batch
  }
  return lines;
}

}  // namespace opval::ops::group_norm
