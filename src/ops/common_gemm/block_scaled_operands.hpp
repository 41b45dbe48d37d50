#pragma once
// Block-scaled GEMM operands (matmul with block > 0: MXFP8, MXFP6, MXFP4, NVFP4): A's and B's
// elements each carry one scale per block of `block` consecutive values along k. A [batch...,
// m, k] has A_scale [batch..., m, k/block] (blocks along its rows), B [batch..., k, n] has
// B_scale [batch..., k/block, n] (blocks down its columns); the scales are stored row-major.
// The value an element stands for is element * scale, exact in fp64 (and in f32 for scales
// inside f32's range: at most 4 + 4 significant bits).
#include <cstdint>
#include <vector>

#include "core/fill.hpp"
#include "ops/common_block/block_scaling.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::common_gemm {

/// Along which axis of a [batch..., rows, cols] operand its blocks run: the rows' (A: blocks of
/// consecutive columns k) or the columns' (B: blocks of consecutive rows k).
enum class block_axis : std::uint8_t { along_rows, down_columns };

/// The values of a block-scaled operand x (logical row-major): each element times its block's
/// scale from `scales` (row-major, the reduced axis divided by `block`).
std::vector<double> dequantized(const tensor& x, const tensor& scales, std::int64_t block, block_axis axis);

/// Fills a block-scaled operand as a quantizer would produce it: wide values of `wide`'s
/// kind, each block's magnitude spread by a power of two 2^-6 .. 2^6 (so the scales vary from
/// block to block), quantized with the format's own rule (common_block::quantize_blocks);
/// the elements to x, the scales to `scales`. Returns the root mean square of the dequantized
/// values.
double fill_block_scaled(tensor& x, tensor& scales, const common_block::block_scaling& f, block_axis axis,
                         const fill_params& wide, std::uint64_t seed, std::uint64_t stream);

}  // namespace opval::ops::common_gemm
