#include "opval/dtype.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include "opval/error.hpp"

namespace opval {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

// Bit fields of an IEEE binary64.
constexpr std::uint64_t f64_sign = 1ull << 63;
constexpr std::uint64_t f64_exp_mask = 0x7ffull << 52;  // also the pattern of +inf
constexpr std::uint64_t f64_mant_mask = (1ull << 52) - 1;

// 2^k for k in the normal range of binary64, built from its bits (no libm call on hot paths).
constexpr double exp2i(int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

// 2^k for any k that binary64 holds (subnormals included); used to build constants only.
constexpr double pow2(int e) {
  double v = 1.0;
  for (; e > 0; --e) v *= 2.0;
  for (; e < 0; ++e) v *= 0.5;
  return v;
}

// Largest finite value of a binary format with p significand bits and top exponent emax.
constexpr double format_max(int p, int emax) { return (2.0 - pow2(1 - p)) * pow2(emax); }

// emin defaults to IEEE's 1 - bias; "fnuz" formats have a bias one larger (emin one lower).
constexpr dtype_traits float_traits(dtype t, std::string_view name, int bytes, int p, int ebits,
                                    bool has_inf, bool has_nan, double max, int emin_shift = 0) {
  const int bias = (1 << (ebits - 1)) - 1;
  const int emin = 1 - bias - emin_shift;
  return {t,          name,       bytes, true,           true, p,   ebits, emin, has_inf, has_nan, pow2(-p),
          pow2(1 - p), pow2(emin), pow2(emin - p + 1), max,  -max, ebits + p};  // sign + ebits + p - 1
}

constexpr dtype_traits int_traits(dtype t, std::string_view name, int bytes, bool is_signed,
                                  double lowest, double max, int bits) {
  return {t, name, bytes, false, is_signed, 0, 0, 0, false, false, 0.0, 1.0, 1.0, 1.0, max, lowest, bits};
}

// tf32's values are 19-bit, its patterns f32's.
constexpr dtype_traits stored_in(dtype_traits t, int bits) {
  t.bits = bits;
  return t;
}

// e8m0: 2^(b - 127) for b in 0..254, NaN = 0xff; no sign, no zero, no significand bits.
constexpr dtype_traits e8m0_traits() {
  return {dtype::f8_e8m0, "f8_e8m0", 1, true, false, 1, 8, -127, false, true, 0.5, 1.0,
          pow2(-127), pow2(-127), pow2(127), pow2(-127), 8};
}

// Indexed by the enumerator's value.
constexpr std::array<dtype_traits, 20> all_traits = {
    float_traits(dtype::f64, "f64", 8, 53, 11, true, true, DBL_MAX),
    float_traits(dtype::f32, "f32", 4, 24, 8, true, true, FLT_MAX),
    stored_in(float_traits(dtype::tf32, "tf32", 4, 11, 8, true, true, format_max(11, 127)), 32),
    float_traits(dtype::f16, "f16", 2, 11, 5, true, true, format_max(11, 15)),
    float_traits(dtype::bf16, "bf16", 2, 8, 8, true, true, format_max(8, 127)),
    // OCP "fn": the top binade is usable except S.1111.111 (NaN), so max is 1.75 * 2^8.
    float_traits(dtype::f8_e4m3, "f8_e4m3", 1, 4, 4, false, true, 448.0),
    float_traits(dtype::f8_e5m2, "f8_e5m2", 1, 3, 5, true, true, format_max(3, 15)),
    int_traits(dtype::i8, "i8", 1, true, -128.0, 127.0, 8),
    int_traits(dtype::u8, "u8", 1, false, 0.0, 255.0, 8),
    int_traits(dtype::i32, "i32", 4, true, -2147483648.0, 2147483647.0, 32),
    // 2^63 - 1 is not a double: max is 2^63, the double that i64's largest value decodes to.
    int_traits(dtype::i64, "i64", 8, true, -0x1p63, 0x1p63, 64),
    int_traits(dtype::boolean, "bool", 1, false, 0.0, 1.0, 8),
    // "fnuz": every exponent pattern is finite, and the top binade has all its values.
    float_traits(dtype::f8_e4m3fnuz, "f8_e4m3fnuz", 1, 4, 4, false, true, format_max(4, 7), 1),
    float_traits(dtype::f8_e5m2fnuz, "f8_e5m2fnuz", 1, 3, 5, false, true, format_max(3, 15), 1),
    e8m0_traits(),
    // The MX element formats have no Inf and no NaN: the top binade is all finite.
    float_traits(dtype::f4_e2m1, "f4_e2m1", 1, 2, 2, false, false, format_max(2, 2)),
    float_traits(dtype::f6_e2m3, "f6_e2m3", 1, 4, 2, false, false, format_max(4, 2)),
    float_traits(dtype::f6_e3m2, "f6_e3m2", 1, 3, 3, false, false, format_max(3, 4)),
    int_traits(dtype::i4, "i4", 1, true, -8.0, 7.0, 4),
    int_traits(dtype::u4, "u4", 1, false, 0.0, 15.0, 4),
};
static_assert(all_traits[static_cast<int>(dtype::boolean)].type == dtype::boolean);
static_assert(all_traits[static_cast<int>(dtype::u4)].type == dtype::u4);
static_assert(all_traits[static_cast<int>(dtype::f8_e5m2)].max == 57344.0);
static_assert(all_traits[static_cast<int>(dtype::f16)].max == 65504.0);
static_assert(all_traits[static_cast<int>(dtype::f8_e4m3fnuz)].max == 240.0);
static_assert(all_traits[static_cast<int>(dtype::f8_e4m3fnuz)].min_subnormal == 0x1p-10);
static_assert(all_traits[static_cast<int>(dtype::f4_e2m1)].max == 6.0);
static_assert(all_traits[static_cast<int>(dtype::f6_e2m3)].max == 7.5);
static_assert(all_traits[static_cast<int>(dtype::f6_e3m2)].max == 28.0);
static_assert(all_traits[static_cast<int>(dtype::f6_e3m2)].min_subnormal == 0.0625);

// "fnuz" formats: one zero and one NaN, the pattern of -0.
constexpr bool is_fnuz(dtype t) { return t == dtype::f8_e4m3fnuz || t == dtype::f8_e5m2fnuz; }

double round_integer(const dtype_traits& tr, double x, rounding r) {
  // bool follows C++ and NumPy truthiness: anything nonzero, NaN included, is true.
  if (tr.type == dtype::boolean) return x != 0.0 ? 1.0 : 0.0;
  if (std::isnan(x)) return 0.0;
  const double y = r == rounding::rne ? std::nearbyint(x) : std::trunc(x);
  // Clamping also turns +-inf into the extremes; "+ 0.0" makes -0 (from -0.4) an integer zero.
  return std::clamp(y, tr.lowest, tr.max) + 0.0;
}

// Rounds a finite, nonzero, non-NaN magnitude-with-sign x to p significant bits with exponent
// no lower than emin, by integer arithmetic on the binary64 significand. The result may lie
// beyond the type's max (the caller decides what overflow becomes).
inline double round_significand(const dtype_traits& tr, double x, rounding r) {
  const std::uint64_t a = std::bit_cast<std::uint64_t>(x) & ~f64_sign;
  // A binary64 subnormal is below half the smallest subnormal of every narrower format.
  if (a <= f64_mant_mask) return std::copysign(0.0, x);
  const int e = static_cast<int>(a >> 52) - 1023;
  const std::uint64_t sig = (a & f64_mant_mask) | (1ull << 52);
  // Low significand bits to drop: 53 - p, plus the shift into the target's subnormal range.
  const int drop = 53 - tr.precision + std::max(0, tr.min_exponent - e);
  if (drop > 53) return std::copysign(0.0, x);  // below half the smallest subnormal
  std::uint64_t units;
  if (r == rounding::rne)  // adding half - 1 + lsb carries exactly when above half or a tie to odd
    units = (sig + (1ull << (drop - 1)) - 1 + ((sig >> drop) & 1u)) >> drop;
  else
    units = sig >> drop;
  return std::copysign(static_cast<double>(units) * exp2i(e + drop - 52), x);
}

// e8m0 holds powers of two only. Its values have no significand bits, so ties to even cannot
// choose between 2^e and 2^(e+1): a tie (1.5 * 2^e) goes up, as in ml_dtypes. There is no zero:
// zero, negatives and NaN become NaN, and values below 2^-127 become 2^-127.
double round_e8m0(const dtype_traits& tr, double x, rounding r, overflow o) {
  if (!(x > 0.0)) return qnan;
  if (std::isinf(x)) return o == overflow::saturate ? tr.max : qnan;
  int e = std::ilogb(x);
  if (r == rounding::rne && x >= 1.5 * std::ldexp(1.0, e)) ++e;
  if (e < tr.min_exponent) return tr.min_normal;
  if (e > 127) return r == rounding::rz || o == overflow::saturate ? tr.max : qnan;
  return std::ldexp(1.0, e);
}

double round_float(const dtype_traits& tr, double x, rounding r, overflow o) {
  if (tr.type == dtype::f8_e8m0) return round_e8m0(tr, x, r, o);
  const std::uint64_t a = std::bit_cast<std::uint64_t>(x) & ~f64_sign;
  // Without NaN and Inf (the MX element formats) NaN becomes 0, as in the integer types, and
  // everything beyond the range saturates (OCP MX v1.0 5.3.3).
  const bool finite_only = !tr.has_nan;
  if (a >= f64_exp_mask) {  // NaN or infinity
    if (a > f64_exp_mask) return finite_only ? 0.0 : qnan;
    if (tr.has_inf) return x;
    return o == overflow::saturate || finite_only ? std::copysign(tr.max, x) : qnan;
  }
  if (tr.type == dtype::f64) return x;
  double y;
  if (tr.type == dtype::f32 && r == rounding::rne)
    y = static_cast<float>(x);  // the hardware conversion rounds to nearest even
  else
    y = round_significand(tr, x, r);
  if (std::fabs(y) > tr.max) {
    // Round-toward-zero never leaves the finite range (IEEE 754 7.4); only rne overflows.
    if (r == rounding::rz || o == overflow::saturate || finite_only) return std::copysign(tr.max, x);
    return tr.has_inf ? std::copysign(inf, x) : qnan;
  }
  if (is_fnuz(tr.type) && y == 0.0) return 0.0;  // no -0: its pattern is the NaN
  return y;
}

// The storage pattern of y, a value of the narrow float type tr (f16, fp8, fp6, fp4), from
// y's bits. e8m0's pattern is y's biased exponent (the same as f32's).
std::uint64_t pack_float(const dtype_traits& tr, double y) {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(y);
  const std::uint64_t a = b & ~f64_sign;
  if (tr.type == dtype::f8_e8m0)
    return a > f64_exp_mask ? 0xffu : static_cast<std::uint64_t>(static_cast<int>(a >> 52) - 1023 + 127);
  const int mbits = tr.precision - 1;
  const std::uint64_t sign_bit = 1ull << (tr.bits - 1);
  const std::uint64_t sign = (b >> 63) != 0 ? sign_bit : 0;
  const std::uint64_t exp_ones = (1ull << tr.exponent_bits) - 1;
  const std::uint64_t mant_ones = (1ull << mbits) - 1;
  if (a > f64_exp_mask) {
    if (is_fnuz(tr.type)) return sign_bit;                           // the pattern of -0
    if (!tr.has_inf) return sign | (exp_ones << mbits) | mant_ones;  // S.1111.111 of "fn"
    return sign | (exp_ones << mbits) | (1ull << (mbits - 1));       // the quiet NaN
  }
  if (a == f64_exp_mask) return sign | (exp_ones << mbits);
  const double mag = std::bit_cast<double>(a);
  if (mag < tr.min_normal) return sign | static_cast<std::uint64_t>(mag / tr.min_subnormal);
  const int e = static_cast<int>(a >> 52) - 1023;
  const auto biased = static_cast<std::uint64_t>(e - tr.min_exponent + 1);
  return sign | (biased << mbits) | ((a >> (52 - mbits)) & mant_ones);
}

double unpack_float(const dtype_traits& tr, std::uint64_t bits) {
  if (tr.type == dtype::f8_e8m0) return bits == 0xffu ? qnan : std::ldexp(1.0, static_cast<int>(bits) - 127);
  if (is_fnuz(tr.type) && bits == 1ull << (tr.bits - 1)) return qnan;
  const int mbits = tr.precision - 1;
  const bool negative = (bits >> (tr.bits - 1)) & 1u;
  const std::uint64_t exp_ones = (1ull << tr.exponent_bits) - 1;
  const std::uint64_t biased = (bits >> mbits) & exp_ones;
  const std::uint64_t mant = bits & ((1ull << mbits) - 1);
  double v;
  if (biased == exp_ones && tr.has_inf) {
    v = mant == 0 ? inf : qnan;
  } else if (biased == exp_ones && tr.has_nan && !is_fnuz(tr.type) && mant == (1ull << mbits) - 1) {
    v = qnan;  // the only NaN encodings of an "fn" type
  } else if (biased == 0) {
    v = static_cast<double>(mant) * tr.min_subnormal;
  } else {
    const int exponent = static_cast<int>(biased) - 1 + tr.min_exponent;
    v = std::bit_cast<double>((static_cast<std::uint64_t>(exponent + 1023) << 52) |
                              (mant << (52 - mbits)));
  }
  return negative ? -v : v;
}

// One-byte float values by pattern (the low `bits` bits): decoding them is a load in kernels'
// inner loops. Entries of the other types stay empty.
using byte_values = std::array<double, 256>;
std::array<byte_values, all_traits.size()> narrow_float_tables() {
  std::array<byte_values, all_traits.size()> tables{};
  for (const dtype_traits& tr : all_traits)
    if (tr.is_float && tr.size_bytes == 1)
      for (std::uint64_t bits = 0; bits < (1u << tr.bits); ++bits)
        tables[static_cast<int>(tr.type)][bits] = unpack_float(tr, bits);
  return tables;
}
const std::array<byte_values, all_traits.size()> narrow_values = narrow_float_tables();

double narrow_value(dtype t, std::uint64_t bits) {
  return narrow_values[static_cast<int>(t)][bits & ((1u << all_traits[static_cast<int>(t)].bits) - 1)];
}

// The storage pattern of y, which is already a value of t.
std::uint64_t bits_of(const dtype_traits& tr, double y) {
  switch (tr.type) {
    case dtype::f64: return std::bit_cast<std::uint64_t>(y);
    case dtype::f32:
    case dtype::tf32: return std::bit_cast<std::uint32_t>(static_cast<float>(y));
    case dtype::bf16: return std::bit_cast<std::uint32_t>(static_cast<float>(y)) >> 16;
    case dtype::f16:
    case dtype::f8_e4m3:
    case dtype::f8_e5m2:
    case dtype::f8_e4m3fnuz:
    case dtype::f8_e5m2fnuz:
    case dtype::f8_e8m0:
    case dtype::f4_e2m1:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2: return pack_float(tr, y);
    case dtype::i8: return static_cast<std::uint8_t>(static_cast<std::int8_t>(y));
    case dtype::i4: return static_cast<std::uint8_t>(static_cast<std::int8_t>(y)) & 0xfu;
    case dtype::u4: return static_cast<std::uint8_t>(y);
    case dtype::u8:
    case dtype::boolean: return static_cast<std::uint8_t>(y);
    case dtype::i32: return static_cast<std::uint32_t>(static_cast<std::int32_t>(y));
    case dtype::i64:  // the clamped 2^63 stands for i64's largest value
      return y >= 0x1p63 ? static_cast<std::uint64_t>(INT64_MAX)
                         : static_cast<std::uint64_t>(static_cast<std::int64_t>(y));
  }
  return 0;
}

// Position of a non-NaN float value among t's values of its sign: magnitude patterns of IEEE
// formats are ordered like the values, and tf32 uses only every 2^13-th f32 pattern.
std::uint64_t magnitude_ordinal(const dtype_traits& tr, double y) {
  const std::uint64_t sign_bit = tr.is_signed ? 1ull << (tr.bits - 1) : 0;  // e8m0 has none
  const std::uint64_t magnitude = bits_of(tr, y) & ~sign_bit;
  return tr.type == dtype::tf32 ? magnitude >> 13 : magnitude;
}

}  // namespace

const dtype_traits& traits(dtype t) { return all_traits.at(static_cast<std::size_t>(t)); }

std::string_view to_string(dtype t) { return traits(t).name; }

dtype parse_dtype(std::string_view name) {
  for (const auto& tr : all_traits)
    if (tr.name == name) return tr.type;
  struct alias {
    std::string_view name;
    dtype type;
  };
  static constexpr alias aliases[] = {
      {"fp64", dtype::f64},        {"fp32", dtype::f32},      {"fp16", dtype::f16},
      {"half", dtype::f16},        {"s8", dtype::i8},         {"s32", dtype::i32},
      {"s64", dtype::i64},         {"e4m3", dtype::f8_e4m3},  {"f8e4m3", dtype::f8_e4m3},
      {"e5m2", dtype::f8_e5m2},    {"f8e5m2", dtype::f8_e5m2}, {"boolean", dtype::boolean},
      {"double", dtype::f64},      {"float", dtype::f32},      {"e8m0", dtype::f8_e8m0},
      {"f8_e8m0fnu", dtype::f8_e8m0}, {"e2m1", dtype::f4_e2m1}, {"fp4", dtype::f4_e2m1},
      {"e2m3", dtype::f6_e2m3},    {"e3m2", dtype::f6_e3m2},  {"e4m3fnuz", dtype::f8_e4m3fnuz},
      {"e5m2fnuz", dtype::f8_e5m2fnuz}, {"int4", dtype::i4}, {"s4", dtype::i4}, {"uint4", dtype::u4}};
  for (const auto& a : aliases)
    if (a.name == name) return a.type;
  throw error("unknown dtype '" + std::string(name) +
              "' (known: f64 f32 tf32 f16 bf16 f8_e4m3 f8_e5m2 f8_e4m3fnuz f8_e5m2fnuz f8_e8m0 f4_e2m1 "
              "f6_e2m3 f6_e3m2 i8 u8 i32 i64 i4 u4 bool)");
}

bool is_float(dtype t) { return traits(t).is_float; }

dtype storage_type(dtype t) { return t == dtype::tf32 ? dtype::f32 : t; }

double round_to(dtype t, double x, rounding r, overflow o) {
  const auto& tr = traits(t);
  return tr.is_float ? round_float(tr, x, r, o) : round_integer(tr, x, r);
}

std::uint64_t encode(dtype t, double x, rounding r, overflow o) {
  return bits_of(traits(t), round_to(t, x, r, o));
}

double decode(dtype t, std::uint64_t bits) {
  switch (t) {
    case dtype::f64: return std::bit_cast<double>(bits);
    case dtype::f32:
    case dtype::tf32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case dtype::bf16: return std::bit_cast<float>(static_cast<std::uint32_t>(bits << 16));
    case dtype::f16: return unpack_float(traits(t), bits & 0xffffu);
    case dtype::f8_e4m3:
    case dtype::f8_e5m2:
    case dtype::f8_e4m3fnuz:
    case dtype::f8_e5m2fnuz:
    case dtype::f8_e8m0:
    case dtype::f4_e2m1:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2: return narrow_value(t, bits);
    case dtype::i4: return static_cast<double>(static_cast<int>((bits & 0xfu) ^ 0x8u) - 8);  // sign-extends
    case dtype::u4: return static_cast<double>(bits & 0xfu);
    case dtype::i8: return static_cast<std::int8_t>(bits);
    case dtype::u8: return static_cast<std::uint8_t>(bits);
    case dtype::boolean: return (bits & 0xffu) != 0 ? 1.0 : 0.0;
    case dtype::i32: return static_cast<std::int32_t>(bits);
    case dtype::i64: return static_cast<double>(static_cast<std::int64_t>(bits));
  }
  return 0.0;
}

double ulp(dtype t, double x) {
  const auto& tr = traits(t);
  if (!tr.is_float) return 1.0;
  const double mag = std::fabs(x);
  if (!std::isfinite(mag)) return inf;
  if (mag < tr.min_normal) return tr.min_subnormal;
  const int e = static_cast<int>(std::bit_cast<std::uint64_t>(mag) >> 52) - 1023;
  return std::ldexp(1.0, e - (tr.precision - 1));  // ldexp: f64's ulp near 2^-1022 is subnormal
}

double ulp_distance(dtype t, double a, double b) {
  const auto& tr = traits(t);
  const double ra = round_to(t, a), rb = round_to(t, b);
  if (std::isnan(ra) || std::isnan(rb)) return inf;
  if (!tr.is_float) return std::fabs(ra - rb);
  const std::uint64_t oa = magnitude_ordinal(tr, ra), ob = magnitude_ordinal(tr, rb);
  // Opposite signs: the path crosses zero, where -0 and +0 share one position.
  if (std::signbit(ra) != std::signbit(rb)) return static_cast<double>(oa + ob);
  return static_cast<double>(oa > ob ? oa - ob : ob - oa);
}

}  // namespace opval
