// Numeric types: constants, exact conversions checked against hardware and independent
// references, and ULP arithmetic.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <sstream>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "opval/dtype.hpp"
#include "opval/error.hpp"

namespace {

using opval::dtype;
using opval::overflow;
using opval::rounding;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

constexpr dtype float_types[] = {dtype::f64, dtype::f32, dtype::tf32, dtype::f16,
                                 dtype::bf16, dtype::f8_e4m3, dtype::f8_e5m2};
constexpr dtype narrow_types[] = {dtype::f16, dtype::bf16, dtype::f8_e4m3, dtype::f8_e5m2};

std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
float float_of(std::uint32_t u) { return std::bit_cast<float>(u); }
// Same value and same sign of zero (NaNs compare equal to NaNs).
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// ---------------------------------------------------------------------------------------
// Independent references
// ---------------------------------------------------------------------------------------

// The textbook decoding of a binary format: (-1)^s * 2^(e-bias) * 1.m, or 2^(1-bias) * 0.m.
double reference_decode(int ebits, int mbits, bool fn, std::uint32_t bits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const std::uint32_t s = bits >> (ebits + mbits) & 1u;
  const std::uint32_t e = bits >> mbits & ((1u << ebits) - 1);
  const std::uint32_t m = bits & ((1u << mbits) - 1);
  const bool top = e == (1u << ebits) - 1;
  double v;
  if (top && !fn) v = m == 0 ? inf : nan_v;
  else if (top && fn && m == (1u << mbits) - 1) v = nan_v;
  else if (e == 0) v = std::ldexp(static_cast<double>(m), 1 - bias - mbits);
  else v = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -mbits), static_cast<int>(e) - bias);
  return s ? -v : v;
}

// Rounding by search: all finite non-negative values of an 8-bit format, sorted, plus the
// virtual value one ULP beyond max (what an unbounded exponent would give); nearest with ties
// to the even pattern, or the largest not above for rz.
struct fp8_reference {
  std::vector<double> values;     // ascending, the last one virtual
  std::vector<std::uint32_t> patterns;
  double max;
  bool has_inf;

  fp8_reference(int ebits, int mbits, bool fn) : has_inf(!fn) {
    for (std::uint32_t b = 0; b < 128; ++b) {
      double v = reference_decode(ebits, mbits, fn, b);
      if (std::isfinite(v)) {
        values.push_back(v);
        patterns.push_back(b);
      }
    }
    max = values.back();
    const double max_ulp = values.back() - values[values.size() - 2];
    values.push_back(max + max_ulp);
    patterns.push_back(patterns.back() + 1);
  }

  double round(double x, rounding r, overflow o) const {
    if (std::isnan(x)) return nan_v;
    const double mag = std::fabs(x);
    double y;
    if (std::isinf(x)) {
      y = has_inf ? inf : (o == overflow::saturate ? max : nan_v);
      return std::copysign(y, x);
    }
    auto hi = std::lower_bound(values.begin(), values.end(), mag);
    if (hi == values.end()) {
      y = values.back() * 2;  // far beyond: overflow
    } else if (*hi == mag) {
      y = mag;
    } else {
      auto lo = hi - 1;
      if (r == rounding::rz) {
        y = *lo;
      } else {
        double dlo = mag - *lo, dhi = *hi - mag;
        if (dlo < dhi) y = *lo;
        else if (dhi < dlo) y = *hi;
        else y = patterns[lo - values.begin()] % 2 == 0 ? *lo : *hi;
      }
    }
    if (y > max) {
      if (r == rounding::rz || o == overflow::saturate) y = max;
      else y = has_inf ? inf : nan_v;
    }
    return std::copysign(y, x);
  }
};

// Rounding by scaling: the significand of |x| at the format's quantum, rounded by the libm
// (the lead's first implementation; slow but simple).
double reference_round(dtype t, double x, rounding r, overflow o) {
  const auto& tr = opval::traits(t);
  if (std::isnan(x)) return nan_v;
  if (std::isinf(x)) {
    if (tr.has_inf) return x;
    return o == overflow::saturate ? std::copysign(tr.max, x) : nan_v;
  }
  if (x == 0) return x;
  int e = 0;
  std::frexp(std::fabs(x), &e);
  const int exponent = std::max(e - 1, tr.min_exponent);
  const double quantum = std::ldexp(1.0, exponent - (tr.precision - 1));
  const double scaled = std::fabs(x) / quantum;
  double y = (r == rounding::rne ? std::nearbyint(scaled) : std::trunc(scaled)) * quantum;
  if (y > tr.max) {
    if (r == rounding::rz || o == overflow::saturate) y = tr.max;
    else y = tr.has_inf ? inf : nan_v;
  }
  return std::copysign(y, x);
}

std::uint16_t f16c_convert(float f, int mode) {
  __m128i h = mode == 0 ? _mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                        : _mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  return static_cast<std::uint16_t>(_mm_extract_epi16(h, 0));
}

float f16c_decode(std::uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }

// bf16 by the well-known bit trick on the f32 pattern (not for NaN).
std::uint16_t bf16_bit_trick(std::uint32_t u, rounding r) {
  if (r == rounding::rz) return static_cast<std::uint16_t>(u >> 16);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

__attribute__((target("avx512bf16,avx512f,avx512vl"))) std::uint16_t avx512_bf16(float f) {
  const __m128bh r = _mm_cvtneps_pbh(_mm_set1_ps(f));
  std::uint16_t out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

// f32 values that probe rounding to a narrower format sharing f32's low bits: for every
// interval between consecutive narrow values (f32 patterns [lo, hi)), the ends, the pattern
// midpoint and its neighbours, and random positions.
std::vector<float> boundary_probes(std::uint32_t lo_pattern, std::uint32_t hi_pattern,
                                   std::mt19937_64& rng, int randoms) {
  std::vector<float> out;
  const std::uint32_t span = hi_pattern - lo_pattern;
  const std::uint32_t mid = lo_pattern + span / 2;
  for (std::uint32_t u : {lo_pattern, lo_pattern + 1, mid - 1, mid, mid + 1, hi_pattern - 1})
    if (u >= lo_pattern && u < hi_pattern) out.push_back(float_of(u));
  for (int k = 0; k < randoms; ++k) out.push_back(float_of(lo_pattern + static_cast<std::uint32_t>(rng() % span)));
  return out;
}

// ---------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------

template <class T>
void expect_traits_match_limits(dtype t) {
  using lim = std::numeric_limits<T>;
  const auto& tr = opval::traits(t);
  EXPECT_EQ(tr.precision, lim::digits);
  EXPECT_EQ(tr.min_exponent, lim::min_exponent - 1);  // C counts the significand in [0.5, 1)
  EXPECT_EQ(tr.epsilon, lim::epsilon());
  EXPECT_EQ(tr.unit_roundoff, lim::epsilon() / 2);
  EXPECT_EQ(tr.min_normal, lim::min());
  EXPECT_EQ(tr.min_subnormal, lim::denorm_min());
  EXPECT_EQ(tr.max, lim::max());
  EXPECT_EQ(tr.lowest, lim::lowest());
  EXPECT_EQ(tr.size_bytes, static_cast<int>(sizeof(T)));
  EXPECT_TRUE(tr.has_inf);
  EXPECT_TRUE(tr.has_nan);
}

TEST(dtype_traits, f32_and_f64_match_numeric_limits) {
  expect_traits_match_limits<float>(dtype::f32);
  expect_traits_match_limits<double>(dtype::f64);
}

TEST(dtype_traits, narrow_floats_match_the_literature) {
  struct row {
    dtype t;
    int p, bytes;
    double eps, min_normal, min_subnormal, max;
    bool has_inf;
  };
  const row rows[] = {
      {dtype::f16, 11, 2, 0x1p-10, 0x1p-14, 0x1p-24, 65504.0, true},
      {dtype::bf16, 8, 2, 0x1p-7, 0x1p-126, 0x1p-133, 0x1.fep127, true},
      {dtype::tf32, 11, 4, 0x1p-10, 0x1p-126, 0x1p-136, 0x1.ffcp127, true},
      {dtype::f8_e4m3, 4, 1, 0x1p-3, 0x1p-6, 0x1p-9, 448.0, false},
      {dtype::f8_e5m2, 3, 1, 0x1p-2, 0x1p-14, 0x1p-16, 57344.0, true},
  };
  for (const auto& r : rows) {
    const auto& tr = opval::traits(r.t);
    SCOPED_TRACE(std::string(tr.name));
    EXPECT_TRUE(tr.is_float);
    EXPECT_EQ(tr.precision, r.p);
    EXPECT_EQ(tr.size_bytes, r.bytes);
    EXPECT_EQ(tr.epsilon, r.eps);
    EXPECT_EQ(tr.unit_roundoff, r.eps / 2);
    EXPECT_EQ(tr.min_normal, r.min_normal);
    EXPECT_EQ(tr.min_subnormal, r.min_subnormal);
    EXPECT_EQ(tr.max, r.max);
    EXPECT_EQ(tr.lowest, -r.max);
    EXPECT_EQ(tr.has_inf, r.has_inf);
    EXPECT_TRUE(tr.has_nan);
  }
  EXPECT_NEAR(opval::traits(dtype::bf16).max, 3.3895e38, 0.0001e38);
}

TEST(dtype_traits, integers) {
  struct row {
    dtype t;
    int bytes;
    bool is_signed;
    double lowest, max;
  };
  const row rows[] = {{dtype::i8, 1, true, -128, 127},
                      {dtype::u8, 1, false, 0, 255},
                      {dtype::i32, 4, true, -2147483648.0, 2147483647.0},
                      {dtype::i64, 8, true, -0x1p63, 0x1p63},
                      {dtype::boolean, 1, false, 0, 1}};
  for (const auto& r : rows) {
    const auto& tr = opval::traits(r.t);
    SCOPED_TRACE(std::string(tr.name));
    EXPECT_FALSE(tr.is_float);
    EXPECT_EQ(tr.precision, 0);
    EXPECT_EQ(tr.size_bytes, r.bytes);
    EXPECT_EQ(tr.is_signed, r.is_signed);
    EXPECT_EQ(tr.lowest, r.lowest);
    EXPECT_EQ(tr.max, r.max);
    EXPECT_EQ(opval::ulp(r.t, 5.0), 1.0);
  }
}

TEST(dtype_names, round_trip_and_aliases) {
  for (int i = 0; i <= static_cast<int>(opval::last_dtype); ++i) {
    auto t = static_cast<dtype>(i);
    EXPECT_EQ(opval::traits(t).type, t);
    EXPECT_EQ(opval::parse_dtype(opval::to_string(t)), t);
  }
  EXPECT_EQ(opval::parse_dtype("e4m3"), dtype::f8_e4m3);
  EXPECT_EQ(opval::parse_dtype("fp16"), dtype::f16);
  EXPECT_EQ(opval::parse_dtype("s8"), dtype::i8);
  EXPECT_EQ(opval::to_string(dtype::boolean), "bool");
  EXPECT_THROW(opval::parse_dtype("f12"), opval::error);
  EXPECT_EQ(opval::storage_type(dtype::tf32), dtype::f32);
  EXPECT_EQ(opval::storage_type(dtype::bf16), dtype::bf16);
  EXPECT_TRUE(opval::is_float(dtype::tf32));
  EXPECT_FALSE(opval::is_float(dtype::i32));
}

// ---------------------------------------------------------------------------------------
// Exhaustive decode/encode over the 8- and 16-bit formats
// ---------------------------------------------------------------------------------------

int pattern_bits(dtype t) { return opval::traits(t).size_bytes * 8; }

TEST(dtype_exhaustive, every_pattern_round_trips_in_every_mode) {
  for (dtype t : narrow_types) {
    SCOPED_TRACE(std::string(opval::to_string(t)));
    const std::uint64_t count = 1ull << pattern_bits(t);
    std::uint64_t nans = 0;
    for (std::uint64_t bits = 0; bits < count; ++bits) {
      const double v = opval::decode(t, bits);
      for (auto r : {rounding::rne, rounding::rz})
        for (auto o : {overflow::ieee, overflow::saturate}) {
          const std::uint64_t back = opval::encode(t, v, r, o);
          if (std::isnan(v)) {
            ASSERT_TRUE(std::isnan(opval::decode(t, back))) << bits;
          } else {
            ASSERT_EQ(back, bits) << "value " << v;
            ASSERT_TRUE(same(opval::round_to(t, v, r, o), v)) << v;
          }
        }
      nans += std::isnan(v);
    }
    // NaN counts of the formats: f16 2*(2^10-1), bf16 2*(2^7-1), e5m2 2*3, e4m3 2 ("fn").
    const std::uint64_t expected_nans = t == dtype::f16    ? 2046
                                        : t == dtype::bf16 ? 254
                                        : t == dtype::f8_e5m2 ? 6
                                                              : 2;
    EXPECT_EQ(nans, expected_nans);
  }
}

TEST(dtype_exhaustive, decode_matches_textbook_formula_and_f16c) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    ASSERT_TRUE(same(opval::decode(dtype::f16, h), reference_decode(5, 10, false, h))) << h;
    ASSERT_TRUE(same(opval::decode(dtype::f16, h), f16c_decode(static_cast<std::uint16_t>(h)))) << h;
    ASSERT_TRUE(same(opval::decode(dtype::bf16, h), reference_decode(8, 7, false, h))) << h;
  }
  for (std::uint32_t b = 0; b < 256; ++b) {
    ASSERT_TRUE(same(opval::decode(dtype::f8_e4m3, b), reference_decode(4, 3, true, b))) << b;
    ASSERT_TRUE(same(opval::decode(dtype::f8_e5m2, b), reference_decode(5, 2, false, b))) << b;
  }
  EXPECT_EQ(opval::decode(dtype::f8_e4m3, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(opval::decode(dtype::f8_e4m3, 0x7f)));
  EXPECT_TRUE(std::isnan(opval::decode(dtype::f8_e4m3, 0xff)));
  EXPECT_EQ(opval::decode(dtype::f8_e4m3, 0x78), 256.0);  // S.1111.000 is a number in "fn"
  EXPECT_EQ(opval::decode(dtype::f8_e5m2, 0x7c), inf);
  EXPECT_EQ(opval::decode(dtype::f8_e5m2, 0x7b), 57344.0);
  EXPECT_EQ(opval::decode(dtype::f16, 0x0001), 0x1p-24);
}

// ---------------------------------------------------------------------------------------
// f32 -> f16 against F16C
// ---------------------------------------------------------------------------------------

testing::AssertionResult mismatch(const char* what, double x, std::uint64_t got, std::uint64_t want) {
  std::ostringstream s;
  s << what << ": x=" << std::hexfloat << x << " got 0x" << std::hex << got << " want 0x" << want;
  return testing::AssertionFailure() << s.str();
}

// Compares encode(f16, x) with the hardware for rne and rz, and the saturating variant.
testing::AssertionResult f16_matches_f16c(float f) {
  const std::uint16_t hw = f16c_convert(f, 0);
  const std::uint16_t hw_rz = f16c_convert(f, 1);
  const std::uint64_t ours = opval::encode(dtype::f16, f);
  if (std::isnan(f)) {
    if (std::isnan(opval::decode(dtype::f16, ours))) return testing::AssertionSuccess();
    return mismatch("NaN", f, ours, hw);
  }
  if (ours != hw) return mismatch("rne", f, ours, hw);
  const std::uint64_t rz = opval::encode(dtype::f16, f, rounding::rz);
  if (rz != hw_rz) return mismatch("rz", f, rz, hw_rz);
  // Saturation: finite values that overflow become +-65504; infinities stay.
  const bool overflowed = (hw & 0x7fff) == 0x7c00 && std::isfinite(f);
  const std::uint16_t want = overflowed ? static_cast<std::uint16_t>((hw & 0x8000) | 0x7bff) : hw;
  const std::uint64_t sat = opval::encode(dtype::f16, f, rounding::rne, overflow::saturate);
  if (sat != want) return mismatch("saturate", f, sat, want);
  return testing::AssertionSuccess();
}

TEST(dtype_f16, matches_f16c_near_every_f16_value) {
  // For each f16 magnitude, the f32 values at and around its interval's ends and midpoint.
  std::mt19937_64 rng(1);
  std::int64_t checked = 0;
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {
    const std::uint32_t lo = bits_of(f16c_decode(static_cast<std::uint16_t>(h)));
    const std::uint32_t hi = h == 0x7bff ? bits_of(65536.0f) : bits_of(f16c_decode(static_cast<std::uint16_t>(h + 1)));
    for (float f : boundary_probes(lo, hi, rng, 6)) {
      ASSERT_TRUE(f16_matches_f16c(f));
      ASSERT_TRUE(f16_matches_f16c(-f));
      checked += 2;
    }
  }
  EXPECT_GT(checked, 700000);
}

TEST(dtype_f16, matches_f16c_exhaustively_at_the_edges) {
  // Every f32 from 65504 across the overflow threshold 65520 and 2^16.
  for (std::uint32_t u = bits_of(65504.0f); u <= bits_of(65600.0f); ++u) {
    ASSERT_TRUE(f16_matches_f16c(float_of(u)));
    ASSERT_TRUE(f16_matches_f16c(-float_of(u)));
  }
  // Every f32 in [2^-26, 2^-13): f16 subnormals, the underflow threshold 2^-25 and its ties.
  // The low 8 bits are sampled (they only decide ties, covered by 0, 1, 0x7f..0x81, 0xff).
  for (std::uint32_t hi = bits_of(0x1p-26f) >> 8; hi < (bits_of(0x1p-13f) >> 8); ++hi)
    for (std::uint32_t lo : {0x00u, 0x01u, 0x7fu, 0x80u, 0x81u, 0xffu}) {
      ASSERT_TRUE(f16_matches_f16c(float_of(hi << 8 | lo)));
      ASSERT_TRUE(f16_matches_f16c(-float_of(hi << 8 | lo)));
    }
  for (float f : {0.0f, -0.0f, 65519.996f, 65520.0f, 65519.0f, 0x1p-25f, 0x1.000002p-25f, 0x1p-24f,
                  0x1.8p-24f, 0x1p-14f, 0x1.ffcp-15f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()})
    ASSERT_TRUE(f16_matches_f16c(f));
}

TEST(dtype_f16, matches_f16c_on_random_f32) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 4000000; ++i) {
    const auto u = static_cast<std::uint32_t>(rng());
    ASSERT_TRUE(f16_matches_f16c(float_of(u)));
    // Concentrate on the f16 range: exponents 2^-26 .. 2^17.
    const std::uint32_t e = 101 + static_cast<std::uint32_t>(rng() % 43);
    ASSERT_TRUE(f16_matches_f16c(float_of((u & 0x807fffffu) | e << 23)));
  }
}

TEST(dtype_f16, known_values) {
  EXPECT_EQ(opval::round_to(dtype::f16, 65519.0), 65504.0);
  EXPECT_EQ(opval::round_to(dtype::f16, 65520.0), inf);  // the tie goes to the even 2^16
  EXPECT_EQ(opval::round_to(dtype::f16, 65520.0, rounding::rne, overflow::saturate), 65504.0);
  EXPECT_EQ(opval::round_to(dtype::f16, -1e9, rounding::rz), -65504.0);
  EXPECT_EQ(opval::round_to(dtype::f16, 0x1p-25), 0.0);       // tie with 0: even
  EXPECT_TRUE(std::signbit(opval::round_to(dtype::f16, -0x1p-26)));
  EXPECT_EQ(opval::round_to(dtype::f16, 0x1.0000000001p-25), 0x1p-24);
  EXPECT_EQ(opval::round_to(dtype::f16, 0x1.8p-24), 0x1p-23);  // tie: to the even 2 units
  EXPECT_EQ(opval::round_to(dtype::f16, 1 + 0x1p-11), 1.0);
  EXPECT_EQ(opval::round_to(dtype::f16, 1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-10);  // no double rounding
  EXPECT_EQ(opval::round_to(dtype::f16, 1 + 3 * 0x1p-11), 1 + 0x1p-9);
  EXPECT_EQ(opval::round_to(dtype::f16, 1e-320), 0.0);  // f64 subnormal input
  EXPECT_EQ(opval::encode(dtype::f16, -0.0), 0x8000u);
  EXPECT_EQ(opval::encode(dtype::f16, inf), 0x7c00u);
  EXPECT_EQ(opval::encode(dtype::f16, -inf, rounding::rne, overflow::saturate), 0xfc00u);
}

// ---------------------------------------------------------------------------------------
// bf16 and tf32 against bit tricks (and AVX512_BF16 where the CPU has it)
// ---------------------------------------------------------------------------------------

testing::AssertionResult bf16_matches(float f, bool hardware) {
  const std::uint32_t u = bits_of(f);
  if (std::isnan(f)) {
    if (std::isnan(opval::decode(dtype::bf16, opval::encode(dtype::bf16, f)))) return testing::AssertionSuccess();
    return testing::AssertionFailure() << "NaN lost";
  }
  for (auto r : {rounding::rne, rounding::rz}) {
    const std::uint64_t ours = opval::encode(dtype::bf16, f, r);
    if (ours != bf16_bit_trick(u, r)) return mismatch(r == rounding::rz ? "rz" : "rne", f, ours, bf16_bit_trick(u, r));
  }
  // The instruction treats subnormal inputs and outputs as zero: compare normal ones only.
  if (hardware && std::fabs(f) >= 0x1p-126f && std::fabs(opval::round_to(dtype::bf16, f)) >= 0x1p-126) {
    const std::uint64_t ours = opval::encode(dtype::bf16, f);
    if (ours != avx512_bf16(f)) return mismatch("avx512_bf16", f, ours, avx512_bf16(f));
  }
  return testing::AssertionSuccess();
}

TEST(dtype_bf16, matches_bit_trick_and_avx512_bf16) {
  const bool hardware = __builtin_cpu_supports("avx512bf16");
  std::printf("[ note ] %s\n", hardware ? "comparing with the AVX512_BF16 instruction"
                                        : "no AVX512_BF16 on this CPU: bit-trick reference only");
  std::mt19937_64 rng(3);
  // Around every bf16 value: the dropped 16 bits at 0, 1, half-1, half, half+1, max, random.
  for (std::uint32_t h = 0; h < 0x10000; ++h)
    for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu,
                             static_cast<std::uint32_t>(rng() & 0xffff)})
      ASSERT_TRUE(bf16_matches(float_of(h << 16 | lo), hardware));
  for (int i = 0; i < 2000000; ++i) ASSERT_TRUE(bf16_matches(float_of(static_cast<std::uint32_t>(rng())), hardware));
  EXPECT_EQ(opval::round_to(dtype::bf16, 1 + 0x1p-8), 1.0);
  EXPECT_EQ(opval::round_to(dtype::bf16, 1 + 0x1p-8 + 0x1p-30), 1 + 0x1p-7);  // no double rounding
  EXPECT_EQ(opval::round_to(dtype::bf16, 0x1.ffp127), inf);
  EXPECT_EQ(opval::round_to(dtype::bf16, 0x1.ffp127, rounding::rne, overflow::saturate), 0x1.fep127);
  EXPECT_EQ(opval::round_to(dtype::bf16, 1e300, rounding::rz), 0x1.fep127);
}

TEST(dtype_tf32, rounds_f32_to_ten_mantissa_bits) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < 2000000; ++i) {
    const auto u = static_cast<std::uint32_t>(rng());
    const float f = float_of(u);
    if (std::isnan(f)) continue;
    const std::uint32_t rne = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
    const std::uint32_t rz = u & ~0x1fffu;
    ASSERT_EQ(opval::encode(dtype::tf32, f), rne) << std::hexfloat << f;
    ASSERT_EQ(opval::encode(dtype::tf32, f, rounding::rz), rz) << std::hexfloat << f;
    ASSERT_EQ(opval::round_to(dtype::tf32, f), static_cast<double>(float_of(rne)));
  }
  EXPECT_EQ(opval::round_to(dtype::tf32, 1 + 0x1p-11), 1.0);
  EXPECT_EQ(opval::round_to(dtype::tf32, 1 + 3 * 0x1p-11), 1 + 0x1p-9);
  EXPECT_EQ(opval::round_to(dtype::tf32, 0x1p-140), 0.0);  // tf32 subnormal quantum is 2^-136
  EXPECT_EQ(opval::round_to(dtype::tf32, 0x1.8p-136), 0x1p-135);
  EXPECT_EQ(opval::round_to(dtype::tf32, 0x1.fffp127), inf);
}

TEST(dtype_f32, from_f64_matches_the_hardware_cast_and_rz_truncates) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000000; ++i) {
    const double x = std::bit_cast<double>(rng());
    if (std::isnan(x)) continue;
    ASSERT_TRUE(same(opval::round_to(dtype::f32, x), static_cast<float>(x)));
    // rz: truncate toward zero; the f32 neighbour toward zero of the rne result.
    const double rz = opval::round_to(dtype::f32, x, rounding::rz);
    ASSERT_LE(std::fabs(rz), std::fabs(x));
    ASSERT_TRUE(same(rz, reference_round(dtype::f32, x, rounding::rz, overflow::ieee))) << x;
  }
  EXPECT_EQ(opval::round_to(dtype::f32, 1e300, rounding::rne, overflow::saturate), FLT_MAX);
  EXPECT_EQ(opval::round_to(dtype::f32, -1e300), -inf);
  EXPECT_EQ(opval::round_to(dtype::f64, 0.1), 0.1);
}

// ---------------------------------------------------------------------------------------
// fp8 against the search reference; every float type against the scaling reference
// ---------------------------------------------------------------------------------------

testing::AssertionResult fp8_matches(dtype t, const fp8_reference& ref, double x) {
  for (auto r : {rounding::rne, rounding::rz})
    for (auto o : {overflow::ieee, overflow::saturate}) {
      const double want = ref.round(x, r, o);
      const double got = opval::round_to(t, x, r, o);
      const double decoded = opval::decode(t, opval::encode(t, x, r, o));
      if (!same(got, want) || !same(decoded, want))
        return testing::AssertionFailure() << opval::to_string(t) << " x=" << std::hexfloat << x << " want "
                                           << want << " got " << got << " decoded " << decoded
                                           << " rz=" << (r == rounding::rz) << " sat=" << (o == overflow::saturate);
    }
  return testing::AssertionSuccess();
}

TEST(dtype_fp8, matches_search_reference) {
  const fp8_reference e4m3(4, 3, true), e5m2(5, 2, false);
  EXPECT_EQ(e4m3.max, 448.0);
  EXPECT_EQ(e5m2.max, 57344.0);
  std::mt19937_64 rng(6);
  for (auto [t, ref] : {std::pair{dtype::f8_e4m3, &e4m3}, std::pair{dtype::f8_e5m2, &e5m2}}) {
    // Every value, every midpoint, and the f32 neighbours of the midpoints.
    for (std::size_t i = 0; i + 1 < ref->values.size(); ++i) {
      const double a = ref->values[i], b = ref->values[i + 1], mid = (a + b) / 2;
      for (double x : {a, mid, double(std::nextafter(float(mid), 0.0f)), double(std::nextafter(float(mid), 1e9f)),
                       b + (b - a) * 2, b * 4})
        for (double s : {1.0, -1.0}) ASSERT_TRUE(fp8_matches(t, *ref, s * x));
    }
    // Random f32 values over the format's range and beyond.
    for (int i = 0; i < 1000000; ++i) {
      const auto u = static_cast<std::uint32_t>(rng());
      const std::uint32_t e = 127 - 20 + static_cast<std::uint32_t>(rng() % 40);
      ASSERT_TRUE(fp8_matches(t, *ref, float_of((u & 0x807fffffu) | e << 23)));
    }
    for (double x : {0.0, -0.0, inf, -inf, nan_v, 1e-300, 1e300}) ASSERT_TRUE(fp8_matches(t, *ref, x));
  }
}

TEST(dtype_fp8, saturating_and_non_saturating_overflow) {
  const auto e4m3 = dtype::f8_e4m3, e5m2 = dtype::f8_e5m2;
  EXPECT_EQ(opval::round_to(e4m3, 464.0), 448.0);  // tie between 448 and (virtual) 480: even
  EXPECT_TRUE(std::isnan(opval::round_to(e4m3, 465.0)));
  EXPECT_TRUE(std::isnan(opval::round_to(e4m3, inf)));  // "fn" has no infinity
  EXPECT_EQ(opval::round_to(e4m3, 465.0, rounding::rne, overflow::saturate), 448.0);
  EXPECT_EQ(opval::round_to(e4m3, -1e6, rounding::rne, overflow::saturate), -448.0);
  EXPECT_EQ(opval::round_to(e4m3, -inf, rounding::rne, overflow::saturate), -448.0);
  EXPECT_EQ(opval::round_to(e4m3, 1e6, rounding::rz), 448.0);
  EXPECT_EQ(opval::encode(e4m3, 465.0), 0x7fu);
  EXPECT_EQ(opval::encode(e4m3, -465.0, rounding::rne, overflow::saturate), 0xfeu);
  EXPECT_EQ(opval::round_to(e5m2, 61439.0), 57344.0);
  EXPECT_EQ(opval::round_to(e5m2, 61440.0), inf);  // tie: 57344 has an odd mantissa
  EXPECT_EQ(opval::round_to(e5m2, 61440.0, rounding::rne, overflow::saturate), 57344.0);
  EXPECT_EQ(opval::round_to(e5m2, inf, rounding::rne, overflow::saturate), inf);  // not an overflow
  EXPECT_EQ(opval::encode(e5m2, -1e6), 0xfcu);
  EXPECT_EQ(opval::round_to(e4m3, 0x1p-10), 0.0);    // tie with 0 (min subnormal 2^-9)
  EXPECT_EQ(opval::round_to(e4m3, 0x1.8p-9), 0x1p-8);
  EXPECT_EQ(opval::round_to(e5m2, 0x1.1p-17), 0x1p-16);
}

TEST(dtype_round_to, every_float_type_matches_scaling_reference_on_random_doubles) {
  std::mt19937_64 rng(7);
  for (dtype t : float_types) {
    SCOPED_TRACE(std::string(opval::to_string(t)));
    const int emax = std::ilogb(opval::traits(t).max);
    const int emin = opval::traits(t).min_exponent - opval::traits(t).precision;
    for (int i = 0; i < 300000; ++i) {
      // Doubles with all 52 fraction bits random and exponents spanning the type's range.
      const int e = emin - 3 + static_cast<int>(rng() % static_cast<std::uint64_t>(emax - emin + 6));
      const double m = std::bit_cast<double>((rng() >> 12) | 0x3ff0000000000000ull);  // [1, 2)
      const double x = (rng() & 1 ? -1 : 1) * std::ldexp(m, e);
      for (auto r : {rounding::rne, rounding::rz})
        for (auto o : {overflow::ieee, overflow::saturate})
          ASSERT_TRUE(same(opval::round_to(t, x, r, o), reference_round(t, x, r, o)))
              << std::hexfloat << x << " rz=" << (r == rounding::rz) << " sat=" << (o == overflow::saturate);
    }
  }
}

TEST(dtype_round_to, nan_inf_and_signed_zero) {
  for (dtype t : float_types) {
    SCOPED_TRACE(std::string(opval::to_string(t)));
    for (auto r : {rounding::rne, rounding::rz}) {
      EXPECT_TRUE(std::isnan(opval::round_to(t, nan_v, r)));
      EXPECT_TRUE(std::isnan(opval::round_to(t, -nan_v, r, overflow::saturate)));
      EXPECT_TRUE(same(opval::round_to(t, -0.0, r), -0.0));
      EXPECT_TRUE(same(opval::round_to(t, 0.0, r), 0.0));
      if (opval::traits(t).has_inf) {
        EXPECT_TRUE(same(opval::round_to(t, -inf, r), -inf));
      }
      // Underflow to zero keeps the sign.
      if (t != dtype::f64) {
        EXPECT_TRUE(same(opval::round_to(t, -1e-300, r), -0.0));
      }
      EXPECT_TRUE(std::isnan(opval::decode(t, opval::encode(t, nan_v, r))));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------------------

TEST(dtype_integers, rounding_saturation_and_nan) {
  using opval::round_to;
  EXPECT_EQ(round_to(dtype::i8, 2.5), 2.0);
  EXPECT_EQ(round_to(dtype::i8, 3.5), 4.0);
  EXPECT_EQ(round_to(dtype::i8, -2.5), -2.0);
  EXPECT_EQ(round_to(dtype::i8, 2.7, rounding::rz), 2.0);
  EXPECT_EQ(round_to(dtype::i8, -2.7, rounding::rz), -2.0);
  EXPECT_EQ(round_to(dtype::i8, 127.4), 127.0);
  EXPECT_EQ(round_to(dtype::i8, 300.0), 127.0);
  EXPECT_EQ(round_to(dtype::i8, -300.0), -128.0);
  EXPECT_EQ(round_to(dtype::i8, inf), 127.0);
  EXPECT_EQ(round_to(dtype::i8, -inf), -128.0);
  EXPECT_EQ(round_to(dtype::i8, nan_v), 0.0);
  EXPECT_FALSE(std::signbit(round_to(dtype::i8, -0.4)));  // integers have no -0
  EXPECT_FALSE(std::signbit(round_to(dtype::i32, -0.0)));
  EXPECT_EQ(round_to(dtype::u8, -5.0), 0.0);
  EXPECT_EQ(round_to(dtype::u8, 255.6), 255.0);
  EXPECT_EQ(round_to(dtype::u8, 254.5), 254.0);
  EXPECT_EQ(round_to(dtype::i32, 3e9), 2147483647.0);
  EXPECT_EQ(round_to(dtype::i32, -3e9), -2147483648.0);
  EXPECT_EQ(round_to(dtype::i32, nan_v, rounding::rz), 0.0);
  EXPECT_EQ(round_to(dtype::boolean, 0.5), 1.0);
  EXPECT_EQ(round_to(dtype::boolean, -0.0), 0.0);
  EXPECT_EQ(round_to(dtype::boolean, nan_v), 1.0);  // C++ and NumPy truthiness
  // Patterns.
  EXPECT_EQ(opval::encode(dtype::i8, -1.0), 0xffu);
  EXPECT_EQ(opval::decode(dtype::i8, 0x80), -128.0);
  EXPECT_EQ(opval::encode(dtype::u8, 200.0), 200u);
  EXPECT_EQ(opval::encode(dtype::i32, -2.0), 0xfffffffeu);
  EXPECT_EQ(opval::decode(dtype::i32, 0x80000000u), -2147483648.0);
  EXPECT_EQ(opval::encode(dtype::i64, 1e30), static_cast<std::uint64_t>(INT64_MAX));
  EXPECT_EQ(opval::encode(dtype::i64, -1e30), static_cast<std::uint64_t>(INT64_MIN));
  EXPECT_EQ(opval::decode(dtype::i64, opval::encode(dtype::i64, -123456789012.0)), -123456789012.0);
  EXPECT_EQ(opval::encode(dtype::boolean, 7.0), 1u);
  EXPECT_EQ(opval::decode(dtype::boolean, 0x02), 1.0);
  for (int v = -128; v < 128; ++v)
    ASSERT_EQ(opval::decode(dtype::i8, opval::encode(dtype::i8, v)), v);
}

// ---------------------------------------------------------------------------------------
// ULPs
// ---------------------------------------------------------------------------------------

TEST(dtype_ulp, spacing) {
  using opval::ulp;
  EXPECT_EQ(ulp(dtype::f16, 1.0), 0x1p-10);
  EXPECT_EQ(ulp(dtype::f16, 1.999), 0x1p-10);
  EXPECT_EQ(ulp(dtype::f16, 2.0), 0x1p-9);
  EXPECT_EQ(ulp(dtype::f16, -2.0), 0x1p-9);
  EXPECT_EQ(ulp(dtype::f16, 0.0), 0x1p-24);
  EXPECT_EQ(ulp(dtype::f16, 1e-6), 0x1p-24);
  EXPECT_EQ(ulp(dtype::f16, 65504.0), 32.0);
  EXPECT_EQ(ulp(dtype::bf16, 1.0), 0x1p-7);
  EXPECT_EQ(ulp(dtype::tf32, 1.0), 0x1p-10);
  EXPECT_EQ(ulp(dtype::f8_e4m3, 448.0), 32.0);
  EXPECT_EQ(ulp(dtype::f8_e4m3, 0.0), 0x1p-9);
  EXPECT_EQ(ulp(dtype::f8_e5m2, 1.0), 0.25);
  EXPECT_EQ(ulp(dtype::f64, DBL_MIN), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(ulp(dtype::f64, 0.0), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(ulp(dtype::f32, inf), inf);
  EXPECT_EQ(ulp(dtype::i32, 1e6), 1.0);
  std::mt19937_64 rng(8);
  for (int i = 0; i < 100000; ++i) {
    const float f = std::fabs(float_of(static_cast<std::uint32_t>(rng())));
    if (!std::isfinite(f) || f == FLT_MAX) continue;
    ASSERT_EQ(ulp(dtype::f32, f), double(std::nextafter(f, INFINITY)) - f) << f;
    const double d = std::fabs(std::bit_cast<double>(rng()));
    if (!std::isfinite(d) || d == DBL_MAX) continue;
    ASSERT_EQ(ulp(dtype::f64, d), std::nextafter(d, inf) - d) << d;
  }
}

TEST(dtype_ulp, distance_between_neighbours_of_every_narrow_pattern) {
  for (dtype t : narrow_types) {
    SCOPED_TRACE(std::string(opval::to_string(t)));
    const std::uint64_t half = 1ull << (pattern_bits(t) - 1);  // the sign bit
    for (std::uint64_t bits = 0; bits + 1 < half; ++bits) {
      const double a = opval::decode(t, bits), b = opval::decode(t, bits + 1);
      if (std::isnan(b)) break;
      ASSERT_EQ(opval::ulp_distance(t, a, b), 1.0) << a;
      ASSERT_EQ(opval::ulp_distance(t, -b, -a), 1.0) << a;
      ASSERT_EQ(opval::ulp_distance(t, a, a), 0.0);
      if (std::isfinite(b)) {
        ASSERT_EQ(b - a, opval::ulp(t, a)) << a;  // ulp() is the spacing
      }
    }
    const auto& tr = opval::traits(t);
    EXPECT_EQ(opval::ulp_distance(t, -tr.min_subnormal, tr.min_subnormal), 2.0);
    EXPECT_EQ(opval::ulp_distance(t, 0.0, -0.0), 0.0);
    EXPECT_EQ(opval::ulp_distance(t, tr.max, -tr.max), 2.0 * opval::ulp_distance(t, 0.0, tr.max));
    // From 0 to min_normal: the 2^(p-1) - 1 subnormals plus one.
    EXPECT_EQ(opval::ulp_distance(t, 0.0, tr.min_normal), std::ldexp(1.0, tr.precision - 1));
    if (tr.has_inf) EXPECT_EQ(opval::ulp_distance(t, tr.max, inf), 1.0);
    else EXPECT_EQ(opval::ulp_distance(t, tr.max, inf), inf);  // inf is NaN there
    EXPECT_EQ(opval::ulp_distance(t, nan_v, 1.0), inf);
    EXPECT_EQ(opval::ulp_distance(t, nan_v, nan_v), inf);
  }
}

TEST(dtype_ulp, distance_in_wide_types) {
  using opval::ulp_distance;
  EXPECT_EQ(ulp_distance(dtype::f32, 1.0, 2.0), 0x1p23);
  EXPECT_EQ(ulp_distance(dtype::f64, 1.0, 2.0), 0x1p52);
  EXPECT_EQ(ulp_distance(dtype::tf32, 1.0, 2.0), 1024.0);
  EXPECT_EQ(ulp_distance(dtype::tf32, 1.0, 1 + 0x1p-10), 1.0);
  EXPECT_EQ(ulp_distance(dtype::tf32, -0x1p-136, 0x1p-136), 2.0);
  EXPECT_EQ(ulp_distance(dtype::f64, -0x1p-1074, 0x1p-1074), 2.0);
  EXPECT_EQ(ulp_distance(dtype::f64, DBL_MAX, inf), 1.0);
  EXPECT_EQ(ulp_distance(dtype::f32, 1.0, 1.0 + 0x1p-30), 0.0);  // rounded to f32 first
  EXPECT_EQ(ulp_distance(dtype::i8, 3.0, -2.0), 5.0);
  std::mt19937_64 rng(9);
  for (int i = 0; i < 100000; ++i) {
    const double d = std::bit_cast<double>(rng());
    if (!std::isfinite(d) || std::fabs(d) == DBL_MAX) continue;
    ASSERT_EQ(ulp_distance(dtype::f64, d, std::nextafter(d, inf)), 1.0) << d;
    const float f = static_cast<float>(d);
    if (!std::isfinite(f) || std::fabs(f) == FLT_MAX) continue;
    ASSERT_EQ(ulp_distance(dtype::f32, f, std::nextafter(f, -INFINITY)), 1.0) << f;
    ASSERT_EQ(ulp_distance(dtype::f32, f, std::nextafter(std::nextafter(f, INFINITY), INFINITY)), 2.0) << f;
  }
}

}  // namespace
