#pragma once
// Block-scaled formats as cast contracts: OCP microscaling (MX: MXFP8 e4m3/e5m2, MXFP6
// e2m3/e3m2, MXFP4 e2m1, one f8_e8m0 scale per 32 elements) and NVFP4 (e2m1 elements, one
// f8_e4m3 scale per 16, the per-tensor f32 scale as cast's `scale`).
//
// The attribute block=B (> 0) turns a cast into a quantize or a dequantize; the blocks are B
// contiguous elements along the innermost axis (whose extent B must divide):
// - quantize, dt=W:acc:E (W one of f64 f32 f16 bf16, E an element type): input x; outputs
//   y (E, x's shape) and y_scale (block_scale, x's shape with the innermost extent / B).
//   v = x * scale in acc; per block, S from amax = max |v| (below); y = round_E(v / S), rne,
//   saturating to +-max (OCP MX v1.0 6.3).
// - dequantize, dt=E:acc:W: inputs x (E) and x_scale (block_scale); output y = round_W(x * S
//   * scale), x * S exact in acc, times scale rounded to acc (skipped when scale = 1).
// The block scales and the elements follow common_block/block_scaling.hpp; a block holding NaN or
// +-Inf has the scale NaN and its elements are round_E(v / NaN): NaN where E has NaN, else 0.
#include <cstdint>
#include <optional>
#include <vector>

#include "ops/common_block/block_scaling.hpp"
#include "opval/dtype.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::cast {

/// A cast's block format: the shared format and the direction.
struct block_format : common_block::block_scaling {
  bool quantize = true;  ///< wide -> (elements, scales); false: (elements, scales) -> wide
};

using common_block::block_amax;
using common_block::block_elements;
using common_block::block_scale;

/// The block format of p, or nothing when block=0; throws opval::error for an inconsistent one.
std::optional<block_format> block_format_of(const problem& p);

/// The shape of the scales of a tensor of `shape`.
dims scale_shape(dims shape, std::int64_t block);

}  // namespace opval::ops::cast
