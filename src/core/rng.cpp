// Counter-based random numbers (rng.hpp). Compiled with -ffp-contract=off (CMakeLists.txt; and
// -fno-math-errno, so that the square root vectorises): the
// polynomials must round each product and sum alone on every target, so that the vectorised
// clones and the scalar functions give the same bits.
#include "core/rng.hpp"

#include <bit>
#include <numbers>

namespace opval {
namespace {

// SplitMix64's output function: a bijection with full avalanche.
constexpr std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The stream's key: the index is mixed into it once per value.
constexpr std::uint64_t key_of(std::uint64_t seed, std::uint64_t stream) { return mix(mix(seed) ^ stream); }

inline double uniform_of(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// ln(x) for x in [2^-53, 1]: x = m 2^e with m in [sqrt(1/2), sqrt(2)), and ln m = 2 atanh(s),
// s = (m - 1)/(m + 1), |s| < 0.172, by its series to s^15 (relative error below 2e-12).
inline double log_unit(double x) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::int64_t e = static_cast<std::int64_t>(bits >> 52) - 1023;
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  const std::int64_t high = m > std::numbers::sqrt2;  // then m/2 and e + 1
  m = m * (1.0 - 0.5 * static_cast<double>(high));
  const double exponent = static_cast<double>(e + high);
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double series = 1.0 / 15;
#pragma GCC unroll 8
  for (const double c : {1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0}) series = series * s2 + c;
  return exponent * std::numbers::ln2 + 2.0 * s * series;
}

// cos(2 pi u) for u in [0, 1): -cos(2 pi y), y = u - 1/2 in [-1/2, 1/2), by the Taylor series in
// z = (2 pi y)^2 <= pi^2 to z^12 (absolute error below 2e-12).
inline double cos_turn(double u) {
  // (-1)^n / (2n)!, n = 0 .. 12.
  constexpr double coefficients[] = {1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800,
                                     1.0 / 479001600, -1.0 / 87178291200.0, 1.0 / 20922789888000.0,
                                     -1.0 / 6402373705728000.0, 1.0 / 2432902008176640000.0,
                                     -1.0 / 1124000727777607680000.0, 1.0 / 620448401733239439360000.0};
  const double t = 2.0 * std::numbers::pi * (u - 0.5), z = t * t;
  double series = coefficients[12];
#pragma GCC unroll 12
  for (int n = 11; n >= 0; --n) series = series * z + coefficients[n];
  return -series;
}

inline double normal_of(std::uint64_t key, std::uint64_t index) {
  // u1 in (0, 1]: its 53 bits plus one, so that the logarithm is finite without a branch.
  const double u1 = static_cast<double>((mix(key ^ (2 * index)) >> 11) + 1) * 0x1.0p-53;
  const double u2 = uniform_of(mix(key ^ (2 * index + 1)));
  return __builtin_sqrt(-2.0 * log_unit(u1)) * cos_turn(u2);
}

}  // namespace

std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix(key_of(seed, stream) ^ index);
}

double random_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return uniform_of(random_bits(seed, stream, index));
}

double random_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return normal_of(key_of(seed, stream), index);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void random_uniforms(std::uint64_t seed, std::uint64_t stream, std::uint64_t first, std::span<double> out) {
  const std::uint64_t key = key_of(seed, stream);
  double* o = out.data();
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) o[i] = uniform_of(mix(key ^ (first + i)));
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void random_normals(std::uint64_t seed, std::uint64_t stream, std::uint64_t first, std::span<double> out) {
  const std::uint64_t key = key_of(seed, stream);
  double* o = out.data();
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) o[i] = normal_of(key, first + i);
}

}  // namespace opval
