// cast: suites.
//
// smoke: 15 representative pairs (f32 to bf16 / f16 / fp8 / int8 / u8 / bool, narrow types to
// f32, ...) with a stepped, padded layout, the special fill, saturation and scaling; then every
// one of the 121 pairs once, so smoke covers every contract of the op.
// regression: every pair with sizes 1, 1031 and a 2-D padded, stepped layout, the fills and
// modes (saturate, ftz, scaling) its types make meaningful.
#include <utility>

#include <fmt/format.h>

#include "ops/cast/cast.hpp"
#include "ops/common_eltwise/suite_lines.hpp"

namespace opval::ops::cast {

std::vector<std::string> cast_spec::suite(std::string_view tag) const {
  if (tag == "smoke") return smoke_suite();
  if (tag != "regression") return {};
  std::vector<std::string> lines;
  for (dtype a : all_types)
    for (dtype b : all_types) {
      // The runner's bias test reads the repeated rounding errors of a few distinct values
      // as bias: ties only where dst has many values, scaling only sources with many values.
      const bool many_src = many_source_values(a);
      const bool many_dst = many_destination_values(b);
      eltwise::suite_axis fills{"", "fill=special", "fill=wide", "fill=large", "fill=uniform"};
      if (many_dst && many_src) fills.push_back("fill=ties");
      eltwise::suite_axis modes{"", "saturate=1", "denorm=ftz"};
      if (many_src) eltwise::append(modes, {"scale=0.3", "scale=100", "scale=100 saturate=1"});
      const eltwise::suite_axis axes[] = {
          {"shape=1031", "shape=1", "shape=37x41 stride_pad=3 step=2", "shape=0x7"}, fills, modes};
      const std::string c[] = {contract_text(a, b)};
      eltwise::append(lines, eltwise::covering_lines(name(), axes, c));
    }
  return lines;
}

std::vector<std::string> cast_spec::smoke_suite() const {
  const std::pair<dtype, dtype> pairs[] = {
      {dtype::f32, dtype::bf16},    {dtype::f32, dtype::f16},     {dtype::f32, dtype::f8_e4m3},
      {dtype::f32, dtype::f8_e5m2}, {dtype::bf16, dtype::f8_e4m3}, {dtype::f16, dtype::f8_e5m2},
      {dtype::f32, dtype::i8},      {dtype::f32, dtype::u8},      {dtype::i32, dtype::f32},
      {dtype::f16, dtype::f32},     {dtype::f8_e4m3, dtype::f32}, {dtype::boolean, dtype::f32},
      {dtype::f32, dtype::boolean}, {dtype::i8, dtype::f16},      {dtype::f64, dtype::f32}};
  std::vector<std::string> cs;
  for (auto [a, b] : pairs) cs.push_back(contract_text(a, b));
  const eltwise::suite_axis axes[] = {{"shape=257", "shape=13x17 stride_pad=3 step=2"},
                                      {"", "fill=special"},
                                      {"", "saturate=1", "scale=100"}};
  std::vector<std::string> lines = eltwise::covering_lines(name(), axes, cs);
  // Every supported pair once, so smoke covers every contract of the op.
  for (dtype a : all_types)
    for (dtype b : all_types) lines.push_back(fmt::format("{} shape=257 dt={}", name(), contract_text(a, b)));
  return lines;
}

}  // namespace opval::ops::cast
