#pragma once
// Numeric element types, exact conversions between them, and their precision constants.
#include <cstdint>
#include <string_view>

namespace opval {

/// Element types. tf32 is stored as f32 whose value has at most an 11-bit significand.
/// f8_e4m3 is OCP "fn" (no infinities, max 448, NaN = S.1111.111); f8_e5m2 is IEEE-like.
/// The narrow formats added later keep the enumerators' values stable (the plugin ABI's):
/// - f8_e4m3fnuz, f8_e5m2fnuz: "fnuz" (bias 8 / 16, no infinities, no -0, the one NaN is 0x80);
/// - f8_e8m0: the OCP MX scale, unsigned 2^(b-127) for b = 0..254, NaN = 0xff, no zero;
/// - f4_e2m1, f6_e2m3, f6_e3m2: the OCP MX element formats, finite only (no Inf, no NaN);
/// - i4, u4: 4-bit integers.
/// Sub-byte types (f4, f6, i4, u4) are stored one element per byte, in the byte's low bits
/// (the high bits are zero); real kernels pack them, a plugin sees them unpacked.
enum class dtype : std::uint8_t {
  f64, f32, tf32, f16, bf16, f8_e4m3, f8_e5m2, i8, u8, i32, i64, boolean,
  f8_e4m3fnuz, f8_e5m2fnuz, f8_e8m0, f4_e2m1, f6_e2m3, f6_e3m2, i4, u4
};

/// The last enumerator: the types are dtype(0) .. last_dtype.
inline constexpr dtype last_dtype = dtype::u4;

/// How a value between two representable ones is rounded.
enum class rounding : std::uint8_t { rne /* to nearest, ties to even */, rz /* toward zero */ };

/// What a finite value beyond the largest finite one becomes.
/// ieee: infinity (NaN for types without infinity); saturate: the largest finite value.
/// Integer types and the types with neither infinity nor NaN (f4_e2m1, f6_*) always saturate,
/// and NaN becomes 0 in them.
enum class overflow : std::uint8_t { ieee, saturate };

/// Constants that describe a type; integers have precision 0 and ulp 1.
struct dtype_traits {
  dtype type;
  std::string_view name;
  int size_bytes;        ///< storage size of one element
  bool is_float;
  bool is_signed;
  int precision;         ///< significand bits including the implicit bit (p); 0 for integers
  int exponent_bits;     ///< 0 for integers
  int min_exponent;      ///< exponent of the smallest normal value (emin)
  bool has_inf;
  bool has_nan;
  double unit_roundoff;  ///< u = 2^-p: the relative error bound of rounding to nearest
  double epsilon;        ///< 2^(1-p): the distance from 1 to the next value
  double min_normal;
  double min_subnormal;
  double max;            ///< largest finite value
  double lowest;         ///< most negative finite value (the least one for unsigned types)
  int bits;              ///< bits of a storage pattern (4 for f4_e2m1, stored one per byte; 32 for tf32)
};

/// The constants of t.
const dtype_traits& traits(dtype t);
/// The canonical spelling ("f32", "bf16", "f8_e4m3", "bool", ...).
std::string_view to_string(dtype t);
/// Parses a spelling (also accepts aliases such as "s8", "e4m3", "fp16"); throws opval::error.
dtype parse_dtype(std::string_view name);
/// True for the floating-point types (tf32 included).
bool is_float(dtype t);
/// The type whose bit patterns hold t in memory (tf32 -> f32, otherwise t itself).
dtype storage_type(dtype t);

/// Rounds x to a value of t (returned as double, exactly representable in t).
double round_to(dtype t, double x, rounding r = rounding::rne, overflow o = overflow::ieee);
/// The storage bit pattern of round_to(t, x, r, o), in the low bits of the result.
std::uint64_t encode(dtype t, double x, rounding r = rounding::rne, overflow o = overflow::ieee);
/// The exact value of a storage bit pattern of t.
double decode(dtype t, std::uint64_t bits);

/// The spacing of t's values around x: 2^(e - p + 1) for |x| in [2^e, 2^(e+1)), never below
/// the subnormal spacing; 1 for integers. ulp(t, 0) is the smallest subnormal.
double ulp(dtype t, double x);
/// How many values of t lie between a and b (both rounded to t first), counting one end:
/// 0 when equal, 1 for neighbours; -0 and +0 are 0 apart. Infinite if either is NaN.
double ulp_distance(dtype t, double a, double b);

}  // namespace opval
