#pragma once
// Counter-based random numbers: a value depends only on (seed, stream, index), so data is
// identical for any thread count, shard or evaluation order.
#include <cstdint>

namespace opval {

/// 64 well-mixed bits for (seed, stream, index): SplitMix64's finalizer chained over the
/// three counters, mix(mix(mix(seed) ^ stream) ^ index).
std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);
/// Uniform in [0, 1) with 53 random bits.
double random_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);
/// Standard normal (Box-Muller on two uniforms drawn from sub-counters of index).
double random_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

}  // namespace opval
