// cast's block-scaled contracts (OCP MX, NVFP4): the quantization of fixed blocks against
// torchao (tests/cpp/data/mx_tables.inc, from tests/cpp/data/gen_mx_tables.py), the OCP MX v1.0
// scale rule on hand-made blocks, dequantization, validation, and planted bugs (a scale rounded
// up, elements truncated) caught by the runner while a reciprocal-multiply NVFP4 kernel passes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ops/cast/block_scaling.hpp"
#include "ops/op_testing.hpp"

namespace opval {
namespace {

using namespace opval::testing;

#include "data/mx_tables.inc"

// sim and reference of a block-scaled cast of f32 `values` (rows of `width`).
direct_case quantized(const std::string& attrs, std::span<const double> values, std::int64_t width) {
  const auto rows = static_cast<std::int64_t>(values.size()) / width;
  problem p = parse_problem("cast shape=" + std::to_string(rows) + "x" + std::to_string(width) + " " + attrs);
  tensor x(dtype::f32, {rows, width});
  x.assign(std::vector<double>(values.begin(), values.end()));
  return run_direct(p, 1, {x});
}

// The outputs of c (elements and scales) against an independent quantization: the scales'
// patterns and each element times its scale. Except in MX blocks of the scale 2^-127 (pattern
// 0): torchao divides their elements by 2^-126, f32's smallest normal, while storing 2^-127
// (its mx_tensor.py says 2^-127 "would be more correct"); OcpScaleRule checks opval's there.
void expect_quantization(const direct_case& c, std::span<const std::uint8_t> scales, std::span<const double> values,
                         std::int64_t block, const std::string& what) {
  const tensor& s = c.out[1];
  ASSERT_EQ(static_cast<std::size_t>(s.numel()), scales.size()) << what;
  for (std::int64_t b = 0; b < s.numel(); ++b) {
    EXPECT_EQ(encode(s.type(), s.at(b)), scales[static_cast<std::size_t>(b)]) << what << " scale of block " << b;
    EXPECT_EQ(c.ref[1].at(b), s.at(b)) << what << ": the reference picks the same scale, block " << b;
  }
  std::int64_t compared = 0;
  for (std::int64_t i = 0; i < c.out[0].numel(); ++i) {
    if (s.type() == dtype::f8_e8m0 && scales[static_cast<std::size_t>(i / block)] == 0) continue;
    ++compared;
    EXPECT_EQ(c.out[0].at(i) * s.at(i / block), values[static_cast<std::size_t>(i)]) << what << " element " << i;
  }
  EXPECT_GE(compared, c.out[0].numel() - 2 * block) << what;
}

TEST(BlockScaledCast, MxQuantizationMatchesTorchao) {
  const struct {
    const char* type;
    std::span<const std::uint8_t> scales;
    std::span<const double> values;
  } formats[] = {{"f8_e4m3", f8_e4m3_mx_scales, f8_e4m3_mx_values},
                 {"f8_e5m2", f8_e5m2_mx_scales, f8_e5m2_mx_values},
                 {"f6_e2m3", f6_e2m3_mx_scales, f6_e2m3_mx_values},
                 {"f6_e3m2", f6_e3m2_mx_scales, f6_e3m2_mx_values},
                 {"f4_e2m1", f4_e2m1_mx_scales, f4_e2m1_mx_values}};
  for (const auto& f : formats) {
    const std::string attrs = std::string("dt=f32:f32:") + f.type + " block=32";
    expect_quantization(quantized(attrs, mx_inputs, 32), f.scales, f.values, 32, attrs);
  }
}

TEST(BlockScaledCast, Nvfp4QuantizationMatchesTorchao) {
  const std::string attrs = "dt=f32:f32:f4_e2m1 block=16 block_scale=f8_e4m3";
  expect_quantization(quantized(attrs, nvfp4_inputs, 16), nvfp4_scales, nvfp4_values, 16, attrs);
}

// OCP MX v1.0 6.3: X = 2^(floor(log2(amax)) - emax_elem); P_i = V_i / X rounded to the element
// type, clamped to its max normal.
TEST(BlockScaledCast, OcpScaleRule) {
  std::vector<double> x(32, 1.0);
  x[7] = -1000.0;  // floor(log2 1000) = 9, e4m3's emax is 8: X = 2, and 1000 / 2 = 500 clamps to 448
  auto c = quantized("dt=f32:f32:f8_e4m3 block=32", x, 32);
  EXPECT_EQ(c.out[1].at(0), 2.0);
  EXPECT_EQ(c.out[0].at(7), -448.0);
  EXPECT_EQ(c.out[0].at(0), 0.5);
  x[7] = 7.0;  // e2m1: emax 2, floor(log2 7) = 2: X = 1, and 7 clamps to 6
  c = quantized("dt=f32:f32:f4_e2m1 block=32", x, 32);
  EXPECT_EQ(c.out[1].at(0), 1.0);
  EXPECT_EQ(c.out[0].at(7), 6.0);
  x.assign(32, 0.0);  // amax 0: the smallest scale, zero elements
  c = quantized("dt=f32:f32:f6_e3m2 block=32", x, 32);
  EXPECT_EQ(c.out[1].at(0), 0x1p-127);
  EXPECT_EQ(c.out[0].at(0), 0.0);
  x.assign(32, 0x1p-140);  // below e8m0's range: X = 2^-127 (not f32's smallest normal, 2^-126)
  c = quantized("dt=f32:f32:f8_e5m2 block=32", x, 32);
  EXPECT_EQ(c.out[1].at(0), 0x1p-127);
  EXPECT_EQ(c.out[0].at(0), 0x1p-13);
  x.assign(32, 0.0);
  x[1] = nan_v;  // a NaN makes the block's scale NaN
  c = quantized("dt=f32:f32:f8_e5m2 block=32", x, 32);
  EXPECT_TRUE(std::isnan(c.out[1].at(0)));
  EXPECT_TRUE(std::isnan(c.ref[1].at(0)));
}

TEST(BlockScaledCast, DequantizeMultipliesByTheBlockScale) {
  problem p = parse_problem("cast shape=2x32 dt=f4_e2m1:f32:f32 block=32 scale=0.5");
  tensor x(dtype::f4_e2m1, {2, 32}), s(dtype::f8_e8m0, {2, 1});
  x.assign(std::vector<double>(64, 1.5));
  s.assign(std::vector<double>{8.0, 0x1p-3});
  const direct_case c = run_direct(p, 1, {x, s});
  EXPECT_EQ(c.out[0].at(0), 6.0);                          // 1.5 * 8 * 0.5
  EXPECT_EQ(c.out[0].at(40), 1.5 * 0x1p-3 * 0.5);
  EXPECT_EQ(p.spec().inputs(p)[1].name, "x_scale");
}

TEST(BlockScaledCast, BadFormatsAreRefused) {
  EXPECT_NE(validation_error("cast shape=4x30 dt=f32:f32:f8_e4m3 block=32").find("divide"), std::string::npos);
  EXPECT_NE(validation_error("cast shape=64 dt=f32:f32:i8 block=32").find("block=32 needs"), std::string::npos);
  EXPECT_NE(validation_error("cast shape=64 dt=f32:f32:f8_e5m2 saturate_inf=1").find("saturate=1"), std::string::npos);
  EXPECT_EQ(validation_error("cast shape=2x64 dt=f32:f32:f4_e2m1 block=16 block_scale=f8_e4m3"), "");
}

// The contract's sim; with `scale_up`, the block scale rounded up (2^ceil(log2 amax) - emax: a
// kernel that rounds amax's exponent instead of flooring it); with `truncate`, elements
// rounded toward zero; with `reciprocal`, v * (1/S) in f32 (torchao's NVFP4, legitimate).
kernel_fn mx_kernel(bool scale_up, bool truncate, bool reciprocal) {
  return [=](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const auto f = *ops::cast::block_format_of(p);
    const std::vector<double> x = in[0].to_vector();
    const auto n = static_cast<std::size_t>(f.block);
    for (std::size_t b = 0; b * n < x.size(); ++b) {
      double amax = 0;
      for (std::size_t k = 0; k < n; ++k) amax = std::fmax(amax, std::fabs(x[b * n + k]));
      double s = ops::cast::block_scale(f, amax);
      if (scale_up && f.scale_type == dtype::f8_e8m0 && amax > 0 && s * 2 <= traits(f.scale_type).max) s *= 2;
      out[1].set_at(static_cast<std::int64_t>(b), s);
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = b * n + k;
        const double v = reciprocal ? static_cast<float>(x[i] * static_cast<float>(1.0 / s)) : x[i] / s;
        out[0].set_at(static_cast<std::int64_t>(i), round_to(f.element, v, truncate ? rounding::rz : rounding::rne,
                                                              overflow::saturate));
      }
    }
  };
}

TEST(BlockScaledCast, PlantedBugsFailAndTheReciprocalKernelPasses) {
  const std::vector<std::string> mx = {"cast shape=4x64 dt=f32:f32:f8_e4m3 block=32",
                                       "cast shape=4x64 dt=f32:f32:f4_e2m1 block=32"};
  expect_fails("scale rounded up", mx_kernel(true, false, false), mx, "");
  expect_fails("elements truncated", mx_kernel(false, true, false), mx, "");
  function_backend legit("reciprocal", mx_kernel(false, false, true));
  for (const char* line :
       {"cast shape=4x64 dt=f32:f32:f4_e2m1 block=16 block_scale=f8_e4m3", "cast shape=4x64 dt=f32:f32:f8_e4m3 block=32",
        "cast shape=4x64 dt=f32:f32:f4_e2m1 block=32"}) {
    const case_result r = run_with(line, legit);
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

}  // namespace
}  // namespace opval
