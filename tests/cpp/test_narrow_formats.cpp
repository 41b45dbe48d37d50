// The narrow formats (fnuz fp8, e8m0, the MX fp4/fp6 element formats, int4/uint4) against
// ml_dtypes: every bit pattern's value, every pattern's round trip, and the rounding of every
// midpoint between neighbouring values and of values beyond the range. The expected tables
// come from ml_dtypes through tests/cpp/data/gen_narrow_format_tables.py (checked in, so the
// test needs no Python); rerun the script to regenerate them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "opval/dtype.hpp"

namespace {

using opval::decode;
using opval::dtype;
using opval::encode;
using opval::overflow;
using opval::rounding;

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

struct rounded {
  double x;             // a float32 input
  std::uint8_t bits;    // the pattern ml_dtypes converts it to
};

#include "data/narrow_format_tables.inc"

struct float_case {
  dtype type;
  std::span<const double> values;    // by bit pattern
  std::span<const rounded> rounding;
};

const float_case float_cases[] = {
    {dtype::f8_e4m3, f8_e4m3_values, f8_e4m3_rounded},
    {dtype::f8_e5m2, f8_e5m2_values, f8_e5m2_rounded},
    {dtype::f8_e4m3fnuz, f8_e4m3fnuz_values, f8_e4m3fnuz_rounded},
    {dtype::f8_e5m2fnuz, f8_e5m2fnuz_values, f8_e5m2fnuz_rounded},
    {dtype::f8_e8m0, f8_e8m0_values, f8_e8m0_rounded},
    {dtype::f4_e2m1, f4_e2m1_values, f4_e2m1_rounded},
    {dtype::f6_e2m3, f6_e2m3_values, f6_e2m3_rounded},
    {dtype::f6_e3m2, f6_e3m2_values, f6_e3m2_rounded},
};

// Equal values with equal signs of zero; NaN equals NaN.
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

std::string name(dtype t) { return std::string(opval::to_string(t)); }

TEST(narrow_formats, every_pattern_decodes_as_in_ml_dtypes) {
  for (const auto& c : float_cases) {
    ASSERT_EQ(c.values.size(), std::size_t{1} << opval::traits(c.type).bits) << name(c.type);
    for (std::uint64_t b = 0; b < c.values.size(); ++b)
      EXPECT_TRUE(same(decode(c.type, b), c.values[b])) << name(c.type) << " pattern " << b;
  }
  for (auto [t, values] : {std::pair{dtype::i4, std::span<const double>(i4_values)},
                           std::pair{dtype::u4, std::span<const double>(u4_values)}})
    for (std::uint64_t b = 0; b < 16; ++b) EXPECT_EQ(decode(t, b), values[b]) << name(t) << " pattern " << b;
}

TEST(narrow_formats, every_pattern_round_trips) {
  for (const auto& c : float_cases)
    for (std::uint64_t b = 0; b < c.values.size(); ++b) {
      const double v = decode(c.type, b);
      if (std::isnan(v))  // several NaN patterns may share one canonical encoding
        EXPECT_TRUE(std::isnan(decode(c.type, encode(c.type, v)))) << name(c.type) << " pattern " << b;
      else
        EXPECT_EQ(encode(c.type, v), b) << name(c.type) << " pattern " << b;
    }
  for (dtype t : {dtype::i4, dtype::u4})
    for (std::uint64_t b = 0; b < 16; ++b) EXPECT_EQ(encode(t, decode(t, b)), b) << name(t) << " pattern " << b;
}

// Where ml_dtypes gives NaN, opval must too; the NaN's sign (its pattern) is free.
bool agrees(dtype t, std::uint64_t got, std::uint8_t want) {
  if (std::isnan(decode(t, want))) return std::isnan(decode(t, got));
  return got == want;
}

TEST(narrow_formats, midpoints_and_saturation_round_as_in_ml_dtypes) {
  for (const auto& c : float_cases) {
    EXPECT_GT(c.rounding.size(), c.values.size()) << name(c.type);
    for (const rounded& r : c.rounding)
      EXPECT_TRUE(agrees(c.type, encode(c.type, r.x), r.bits))
          << name(c.type) << " x=" << r.x << " got " << encode(c.type, r.x) << " want " << int{r.bits};
  }
}

// The tables tell rounding modes apart: rounding toward zero instead of to nearest even (a
// planted bug) disagrees with ml_dtypes on every type, so the test above can fail.
TEST(narrow_formats, tables_catch_a_wrong_rounding_mode) {
  for (const auto& c : float_cases) {
    const auto wrong = std::count_if(c.rounding.begin(), c.rounding.end(), [&](const rounded& r) {
      return !agrees(c.type, encode(c.type, r.x, rounding::rz), r.bits);
    });
    EXPECT_GT(wrong, 0) << name(c.type);
  }
}

TEST(narrow_formats, integers_in_range_as_in_ml_dtypes_and_saturate_beyond) {
  for (int v = -8; v <= 7; ++v) EXPECT_EQ(decode(dtype::i4, encode(dtype::i4, v)), v);
  for (int v = 0; v <= 15; ++v) EXPECT_EQ(decode(dtype::u4, encode(dtype::u4, v)), v);
  EXPECT_EQ(opval::round_to(dtype::i4, 7.5), 7.0);
  EXPECT_EQ(opval::round_to(dtype::i4, 2.5), 2.0);   // ties to even
  EXPECT_EQ(opval::round_to(dtype::i4, -8.5), -8.0);
  EXPECT_EQ(opval::round_to(dtype::i4, 100.0), 7.0);
  EXPECT_EQ(opval::round_to(dtype::i4, -inf_v), -8.0);
  EXPECT_EQ(opval::round_to(dtype::i4, nan_v), 0.0);
  EXPECT_EQ(opval::round_to(dtype::u4, -1.0), 0.0);
  EXPECT_EQ(opval::round_to(dtype::u4, 15.5), 15.0);
  EXPECT_EQ(encode(dtype::i4, -1.0), 0xfu);          // the high bits of the byte stay zero
  EXPECT_EQ(decode(dtype::i4, 0xf8u), -8.0);         // and are ignored when read
}

TEST(narrow_formats, mx_elements_have_no_nan_or_inf) {
  for (dtype t : {dtype::f4_e2m1, dtype::f6_e2m3, dtype::f6_e3m2}) {
    const double max = opval::traits(t).max;
    for (overflow o : {overflow::ieee, overflow::saturate}) {
      EXPECT_TRUE(same(opval::round_to(t, nan_v, rounding::rne, o), 0.0)) << name(t);
      EXPECT_EQ(opval::round_to(t, inf_v, rounding::rne, o), max) << name(t);
      EXPECT_EQ(opval::round_to(t, -1e30, rounding::rne, o), -max) << name(t);
    }
  }
}

TEST(narrow_formats, fnuz_has_one_zero_and_one_nan) {
  for (dtype t : {dtype::f8_e4m3fnuz, dtype::f8_e5m2fnuz}) {
    EXPECT_EQ(encode(t, -0.0), 0u) << name(t);
    EXPECT_EQ(encode(t, -1e-30), 0u) << name(t);
    EXPECT_EQ(encode(t, nan_v), 0x80u) << name(t);
    EXPECT_EQ(encode(t, -inf_v), 0x80u) << name(t);
    EXPECT_EQ(opval::round_to(t, -inf_v, rounding::rne, overflow::saturate), -opval::traits(t).max) << name(t);
  }
}

TEST(narrow_formats, e8m0_rounds_ties_up_and_has_no_zero) {
  const dtype t = dtype::f8_e8m0;
  EXPECT_EQ(opval::round_to(t, 1.5), 2.0);
  EXPECT_EQ(opval::round_to(t, 3.0), 4.0);  // not "to even" in the exponent: e8m0 has no significand
  EXPECT_EQ(opval::round_to(t, 2.9), 2.0);
  EXPECT_EQ(opval::round_to(t, 3.9, rounding::rz), 2.0);
  EXPECT_EQ(opval::round_to(t, 0x1p-140), 0x1p-127);
  for (double x : {0.0, -0.0, -1.0, nan_v, inf_v}) EXPECT_TRUE(std::isnan(opval::round_to(t, x))) << x;
  EXPECT_EQ(opval::round_to(t, 0x1p200, rounding::rne, overflow::saturate), 0x1p127);
  EXPECT_EQ(encode(t, 1.0), 127u);
}

// Neighbouring values are one ulp apart: the ordering ulp_distance relies on holds.
TEST(narrow_formats, neighbours_are_one_ulp_apart) {
  for (const auto& c : float_cases) {
    std::vector<double> finite;
    for (double v : c.values)
      if (std::isfinite(v) && !(v == 0.0 && std::signbit(v))) finite.push_back(v);
    std::sort(finite.begin(), finite.end());
    for (std::size_t i = 1; i < finite.size(); ++i)
      EXPECT_EQ(opval::ulp_distance(c.type, finite[i - 1], finite[i]), 1.0) << name(c.type) << " " << finite[i];
    const double max = *std::max_element(finite.begin(), finite.end());
    EXPECT_EQ(opval::traits(c.type).max, max) << name(c.type);
  }
}

TEST(narrow_formats, names_parse) {
  for (dtype t : {dtype::f8_e4m3fnuz, dtype::f8_e5m2fnuz, dtype::f8_e8m0, dtype::f4_e2m1, dtype::f6_e2m3,
                  dtype::f6_e3m2, dtype::i4, dtype::u4})
    EXPECT_EQ(opval::parse_dtype(opval::to_string(t)), t);
  EXPECT_EQ(opval::parse_dtype("e8m0"), dtype::f8_e8m0);
  EXPECT_EQ(opval::parse_dtype("int4"), dtype::i4);
}

}  // namespace
