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
// The block scale S:
// - block_scale=f8_e8m0 (MX): 2^(floor(log2 amax) - emax_E), emax_E the exponent of E's
//   largest value (e4m3 8, e5m2 15, e2m3 2, e3m2 4, e2m1 2), clamped to [2^-127, 2^127];
//   amax = 0 gives 2^-127.
// - block_scale=f8_e4m3 (NVFP4): round_e4m3(amax / max_E), rne, saturating at 448, and at least
//   e4m3's smallest normal 2^-6 (as torchao).
// - a block holding NaN or +-Inf has the scale NaN (opval's choice; OCP leaves it open), and
//   its elements are round_E(v / NaN): NaN where E has NaN, else 0.
#include <cstdint>
#include <optional>
#include <vector>

#include "opval/dtype.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::cast {

struct block_format {
  std::int64_t block = 0;  ///< elements per scale, along the innermost axis
  dtype scale_type = dtype::f8_e8m0;
  dtype element = dtype::f8_e4m3;
  bool quantize = true;    ///< wide -> (elements, scales); false: (elements, scales) -> wide
};

/// The element types a block-scaled cast quantizes to.
inline constexpr dtype block_elements[] = {dtype::f8_e4m3, dtype::f8_e5m2, dtype::f6_e2m3, dtype::f6_e3m2,
                                           dtype::f4_e2m1};

/// The block format of p, or nothing when block=0; throws opval::error for an inconsistent one.
std::optional<block_format> block_format_of(const problem& p);

/// The shape of the scales of a tensor of `shape`.
dims scale_shape(dims shape, std::int64_t block);

/// The scale of one block whose values' largest magnitude is amax (NaN if the block holds a
/// NaN or an infinity).
double block_scale(const block_format& f, double amax);

/// The largest magnitude of each block of `values` (row-major, blocks of f.block), NaN for a
/// block holding NaN or Inf.
std::vector<double> block_amax(const block_format& f, const std::vector<double>& values);

}  // namespace opval::ops::cast
