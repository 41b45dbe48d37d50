#pragma once
// Block scaling, shared by cast (quantize, dequantize) and matmul (block-scaled A and B): OCP
// microscaling (MX v1.0: MXFP8 e4m3/e5m2, MXFP6 e2m3/e3m2, MXFP4 e2m1, one f8_e8m0 scale per
// block of 32 elements) and NVFP4 (e2m1 elements, one f8_e4m3 scale per block of 16; its f32
// per-tensor scale is the op's own scale attribute).
//
// The block scale S of a block whose values' largest magnitude is amax:
// - scale type f8_e8m0 (MX): 2^(floor(log2 amax) - emax_E), emax_E the exponent of the element
//   type E's largest value (e4m3 8, e5m2 15, e2m3 2, e3m2 4, e2m1 2), clamped to
//   [2^-127, 2^127]; amax = 0 gives 2^-127.
// - scale type f8_e4m3 (NVFP4): round_e4m3(amax / max_E), rne, saturating at 448, and at least
//   e4m3's smallest normal 2^-6 (as torchao).
// - a block holding NaN or +-Inf has the scale NaN (opval's choice; OCP leaves it open).
// An element is then round_E(v / S), rne, saturating to +-max (OCP MX v1.0 6.3).
#include <cstdint>
#include <span>
#include <vector>

#include "opval/attr.hpp"
#include "opval/dtype.hpp"

namespace opval::ops::common_block {

/// One block-scaled format: B elements of type `element` share one scale of type `scale_type`.
struct block_scaling {
  std::int64_t block = 0;  ///< elements per scale
  dtype scale_type = dtype::f8_e8m0;
  dtype element = dtype::f8_e4m3;
};

/// The element types of block-scaled formats.
inline constexpr dtype block_elements[] = {dtype::f8_e4m3, dtype::f8_e5m2, dtype::f6_e2m3, dtype::f6_e3m2,
                                           dtype::f4_e2m1};
/// Whether t is one of block_elements.
bool is_block_element(dtype t);

/// The `block_scale` attribute (f8_e8m0 or f8_e4m3) of the ops with block scaling.
attr_def block_scale_attr();

/// The scale of one block whose values' largest magnitude is amax (NaN if the block holds a
/// NaN or an infinity).
double block_scale(const block_scaling& f, double amax);

/// The largest magnitude of each block of `values` (row-major, blocks of f.block consecutive
/// values), NaN for a block holding NaN or Inf.
std::vector<double> block_amax(const block_scaling& f, std::span<const double> values);

/// `values` quantized to f: per block of f.block consecutive values, the scale S (block_scale
/// of its amax) and the elements round_E(v / S), rne, saturating.
struct quantized_blocks {
  std::vector<double> elements, scales;
};
quantized_blocks quantize_blocks(const block_scaling& f, std::span<const double> values);

}  // namespace opval::ops::common_block
