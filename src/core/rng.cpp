#include "core/rng.hpp"

#include <cmath>
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

}  // namespace

std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix(mix(mix(seed) ^ stream) ^ index);
}

double random_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return static_cast<double>(random_bits(seed, stream, index) >> 11) * 0x1.0p-53;
}

double random_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  // Two sub-counters per element keep the value a function of the element alone.
  double u1 = random_uniform(seed, stream, 2 * index);
  double u2 = random_uniform(seed, stream, 2 * index + 1);
  u1 = std::max(u1, 0x1.0p-60);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace opval
