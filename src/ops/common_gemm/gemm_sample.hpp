#pragma once
// The stratified output sample of GEMM-like ops (op_spec::sample, docs/NUMERICS.md "Sampled
// verification"): rows and columns of each output matrix, so that the sampled elements are the
// outputs of a smaller GEMM on the gathered rows of A and columns of B, whose fp64 reference
// and bound are those of the full problem at these elements.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "opval/tensor.hpp"

namespace opval::ops::common_gemm {

/// The side of the aligned tiles that each hold one sampled element.
inline constexpr std::int64_t sample_tile = 16;

/// The indices out of [0, extent) that a sample keeps along one output dimension, sorted: one
/// drawn from each aligned band of `tile` (seeded by seed and stream), and the edges: 0,
/// extent - 1 and the first index of the last, partial tile of each common tiling (8, 16, 32,
/// 64, 128). Every index when extent <= 4 * tile.
std::vector<std::int64_t> sampled_indices(std::int64_t extent, std::int64_t tile, std::uint64_t seed,
                                          std::uint64_t stream);

/// What a sample of `rows` x `cols` sampled indices holds, for the verdict.
std::string sample_coverage(std::int64_t tile);

/// t's elements at `index` along dimension `dim` (NumPy's take), as a contiguous tensor.
tensor take(const tensor& t, int dim, std::span<const std::int64_t> index);

}  // namespace opval::ops::common_gemm
