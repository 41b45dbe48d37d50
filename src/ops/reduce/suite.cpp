// reduce: the suites. Every contract on shapes with the axes that make them interesting
// (inner, outer, middle, several, all), every kind and, in turn, every fill.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ops/reduce/reduce.hpp"

namespace opval::ops::reduce {
namespace {

// Shapes with the axes that make them interesting: inner, outer, middle, several, all.
struct shaped_axes {
  const char* shape;
  const char* axes;
  bool long_sums = false;  ///< over 500 terms: too long for f16 acc; NaN-flooded with fill=special
};

}  // namespace

std::vector<std::string> reduce_spec::suite(std::string_view tag) const {
  const bool smoke = tag == "smoke";
  if (!smoke && tag != "regression") return {};
  static constexpr shaped_axes smoke_cases[] = {{"7", "0"}, {"13x17", "1"}, {"5x6x7", "0x2"}, {"4x33", "0"}};
  static constexpr shaped_axes regression_cases[] = {
      {"1x1", "1"},           {"7", "0"},          {"13x17", "1"},         {"13x17", "0"},
      {"5x6x7", "1"},         {"5x6x7", "0x2"},    {"5x6x7", "0x1x2"},     {"3x1000", "1", true},
      {"1000x3", "0", true},  {"2x4096", "1", true}, {"9x31x5", "1x2"},    {"64x33x3", "0x2"},
      {"4x768", "1", true},   {"2x3x4x5", "1x3"},  {"97x1", "0"},
      {"256x4096", "1", true}, {"4096x256", "0", true}, {"64x64x64", "0x1", true}};
  // Empty tensors: a reduction over nothing (sum 0, mean NaN, max its identity), no outputs.
  static constexpr shaped_axes empty_cases[] = {{"2x0x4", "1"}, {"2x0x4", "2"}, {"0x5", "1"}};
  const std::vector<std::string> fills{"default", "positive", "wide", "cancel", "large", "uniform", "exact", "special"};
  std::vector<std::string> lines;
  std::size_t i = 0;
  auto add = [&](const shaped_axes& c, const char* kind, bool keep, const std::string& dt, const std::string& fill) {
    lines.push_back(fmt::format("reduce shape={} axes={} kind={} keepdims={} dt={} fill={}", c.shape, c.axes, kind,
                                keep ? 1 : 0, dt, fill));
  };
  const std::span<const shaped_axes> cases = smoke ? std::span<const shaped_axes>(smoke_cases)
                                                   : std::span<const shaped_axes>(regression_cases);
  for (const auto& dt : contracts()) {
    const bool integer = dt == "i32";
    for (const auto& c : cases) {
      if (dt == "f16:f16:f16" && c.long_sums) continue;  // n u_f16 >= 1/2: no meaningful bound
      for (const char* kind : {"sum", "mean", "max"}) {
        if (integer && std::string_view(kind) == "mean") continue;
        std::string fill = fills[i++ % fills.size()];
        if (integer && fill == "special") fill = "default";
        // NaN/Inf in most outputs would make the output constant (MISTRUSTED): only short sums.
        if (fill == "special" && c.long_sums) fill = "default";
        add(c, kind, (i % 2) == 0, dt, fill);
      }
    }
  }
  if (smoke) return lines;
  // After all others, so that they move no other line's fill.
  for (const auto& dt : contracts())
    for (const auto& c : empty_cases)
      for (const char* kind : {"sum", "mean", "max"})
        if (dt != "i32" || std::string_view(kind) != "mean") add(c, kind, std::string_view(kind) != "sum", dt, "default");
  return lines;
}

}  // namespace opval::ops::reduce
