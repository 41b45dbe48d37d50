#pragma once
// Counter-based random numbers: a value depends only on (seed, stream, index), so data is
// identical for any thread count, shard, evaluation order, vector width or machine.
#include <cstdint>
#include <span>

namespace opval {

/// 64 well-mixed bits for (seed, stream, index): SplitMix64's finalizer chained over the
/// three counters, mix(mix(mix(seed) ^ stream) ^ index).
std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);
/// Uniform in [0, 1) with 53 random bits.
double random_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);
/// Standard normal: Box-Muller on two uniforms drawn from sub-counters of index (2 index and
/// 2 index + 1), with opval's own polynomial log and cosine (accurate to about 1e-12,
/// evaluated in a fixed order without contracted multiply-adds, so that every machine and
/// vector width gives the same bits).
double random_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

/// random_uniform(seed, stream, first + i) into out[i], vectorised.
void random_uniforms(std::uint64_t seed, std::uint64_t stream, std::uint64_t first, std::span<double> out);
/// random_normal(seed, stream, first + i) into out[i], vectorised.
void random_normals(std::uint64_t seed, std::uint64_t stream, std::uint64_t first, std::span<double> out);

}  // namespace opval
