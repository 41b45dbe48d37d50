// cast: suites.
//
// smoke: 15 representative pairs (f32 to bf16 / f16 / fp8 / int8 / u8 / bool, narrow types to
// f32, ...) with a stepped, padded layout, the special fill, saturation and scaling; then every
// one of the pairs once (the 121 of the 11 types, and the narrow formats to and from f64 f32
// f16 bf16), so smoke covers every contract of the op.
// regression: every pair with sizes 1, 1031 and a 2-D padded, stepped layout, the fills and
// modes (saturate, ftz, scaling; ONNX's saturate_inf to f8_e5m2) its types make meaningful.
#include <utility>

#include <fmt/format.h>

#include "ops/cast/cast.hpp"
#include "ops/common_eltwise/suite_lines.hpp"

namespace opval::ops::cast {
namespace {

// Block-scaled casts: MX (e8m0 scale per 32) quantize and dequantize of every element type,
// NVFP4 (e2m1, e4m3 scale per 16, a tensor scale); regression adds fills and a bf16 source.
std::vector<std::string> block_scaled_lines(std::string_view op, bool regression) {
  auto mx = [](dtype src, dtype dst) { return fmt::format("dt={} block=32", contract_text(src, dst)); };
  auto nvfp4 = [](dtype src, dtype dst, std::string_view scale) {
    return fmt::format("dt={} block=16 block_scale=f8_e4m3 scale={}", contract_text(src, dst), scale);
  };
  std::vector<std::string> formats;
  for (dtype e : block_elements) eltwise::append(formats, {mx(dtype::f32, e), mx(e, dtype::f32)});
  eltwise::append(formats, {nvfp4(dtype::f32, dtype::f4_e2m1, "0.25"), nvfp4(dtype::f4_e2m1, dtype::f32, "4")});
  std::vector<std::string> shapes{"shape=4x64"}, fills{""};
  if (regression) {
    eltwise::append(formats, {mx(dtype::bf16, dtype::f4_e2m1), mx(dtype::f8_e4m3, dtype::bf16)});
    eltwise::append(shapes, {"shape=1x32", "shape=3x5x96"});
    eltwise::append(fills, {" fill=special", " fill=wide", " fill=large", " fill=uniform"});
  }
  std::vector<std::string> lines;
  for (const auto& f : formats)
    for (const auto& s : shapes)
      for (const auto& fill : fills) lines.push_back(fmt::format("{} {} {}{}", op, s, f, fill));
  return lines;
}

}  // namespace

std::vector<std::string> cast_spec::suite(std::string_view tag) const {
  if (tag == "smoke") return smoke_suite();
  if (tag != "regression") return {};
  std::vector<std::string> lines;
  for (auto [a, b] : contract_pairs()) {
    // The runner's bias test reads the repeated rounding errors of a few distinct values
    // as bias: ties only where dst has many values, scaling only sources with many values.
    const bool many_src = many_source_values(a);
    const bool many_dst = many_destination_values(b);
    eltwise::suite_axis fills{"", "fill=special", "fill=wide", "fill=large", "fill=uniform"};
    if (many_dst && many_src) fills.push_back("fill=ties");
    // ftz where the fills rarely reach dst's subnormals: flushing f4/f6's (below 1 or 0.25) would
    // read as a truncation bias.
    eltwise::suite_axis modes{"", "saturate=1"};
    if (!is_float(b) || traits(b).min_normal <= 0x1p-6) modes.push_back("denorm=ftz");
    if (many_src) eltwise::append(modes, {"scale=0.3", "scale=100", "scale=100 saturate=1"});
    if (b == dtype::f8_e5m2) modes.push_back("saturate=1 saturate_inf=1");
    const eltwise::suite_axis axes[] = {
        {"shape=1031", "shape=1", "shape=37x41 stride_pad=3 step=2", "shape=0x7"}, fills, modes};
    const std::string c[] = {contract_text(a, b)};
    eltwise::append(lines, eltwise::covering_lines(name(), axes, c));
  }
  eltwise::append(lines, block_scaled_lines(name(), true));
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
  for (auto [a, b] : contract_pairs()) lines.push_back(fmt::format("{} shape=257 dt={}", name(), contract_text(a, b)));
  eltwise::append(lines, block_scaled_lines(name(), false));
  return lines;
}

}  // namespace opval::ops::cast
