// Block-scaled GEMM operands: their values and their fill, see block_scaled_operands.hpp.
#include "ops/common_gemm/block_scaled_operands.hpp"

#include <cmath>

namespace opval::ops::common_gemm {
namespace {

// The index of the scale of element `linear` (logical row-major) of a [batch..., rows, cols]
// operand, and the position (row-major) in a block-contiguous order: the order in which the
// values of each block are consecutive (the operand itself along rows, its transpose down
// columns).
struct block_index {
  std::int64_t rows, cols, block;
  block_axis axis;

  std::int64_t scale_of(std::int64_t linear) const {
    if (axis == block_axis::along_rows) return linear / block;
    const std::int64_t outer = linear / (rows * cols), r = (linear / cols) % rows, c = linear % cols;
    return (outer * (rows / block) + r / block) * cols + c;
  }
  // Element `linear` in the order where each column's values are consecutive ([batch..., cols,
  // rows]), and scale `s` ([batch..., cols, rows / block]) back to its row-major place.
  std::int64_t contiguous(std::int64_t linear) const {
    if (axis == block_axis::along_rows) return linear;
    const std::int64_t outer = linear / (rows * cols), r = (linear / cols) % rows, c = linear % cols;
    return (outer * cols + c) * rows + r;
  }
  std::int64_t scale_place(std::int64_t s) const {
    if (axis == block_axis::along_rows) return s;
    const std::int64_t per = rows / block, outer = s / (cols * per), c = (s / per) % cols, rb = s % per;
    return (outer * per + rb) * cols + c;
  }
};

block_index index_of(const tensor& x, std::int64_t block, block_axis axis) {
  const dims& shape = x.shape();
  return {shape[shape.size() - 2], shape[shape.size() - 1], block, axis};
}

}  // namespace

std::vector<double> dequantized(const tensor& x, const tensor& scales, std::int64_t block, block_axis axis) {
  const block_index ix = index_of(x, block, axis);
  std::vector<double> v = x.to_vector();
  const std::vector<double> s = scales.to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) v[i] *= s[static_cast<std::size_t>(ix.scale_of(static_cast<std::int64_t>(i)))];
  return v;
}

double fill_block_scaled(tensor& x, tensor& scales, const common_block::block_scaling& f, block_axis axis,
                         const fill_params& wide, std::uint64_t seed, std::uint64_t stream) {
  const block_index ix = index_of(x, f.block, axis);
  const std::int64_t count = x.numel(), blocks = scales.numel();
  tensor values(dtype::f64, {count}), spread(dtype::f64, {blocks});
  fill_tensor(values, wide, seed, stream);
  fill_params exponents;
  exponents.kind = fill_kind::uniform;
  exponents.lo = -6.5;
  exponents.hi = 6.5;
  fill_tensor(spread, exponents, seed, stream + 64);
  // In block-contiguous order: value i belongs to block i / block.
  std::vector<double> v = values.to_vector();
  const std::vector<double> e = spread.to_vector();
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::ldexp(v[i], static_cast<int>(std::lround(e[i / static_cast<std::size_t>(f.block)])));
  const common_block::quantized_blocks q = common_block::quantize_blocks(f, v);
  std::vector<double> elements(v.size()), block_scales(q.scales.size());
  double sum = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto at = static_cast<std::size_t>(ix.contiguous(i));
    elements[static_cast<std::size_t>(i)] = q.elements[at];
    const double d = q.elements[at] * q.scales[at / static_cast<std::size_t>(f.block)];
    if (std::isfinite(d)) sum += d * d;
  }
  for (std::int64_t s = 0; s < blocks; ++s)
    block_scales[static_cast<std::size_t>(ix.scale_place(s))] = q.scales[static_cast<std::size_t>(s)];
  x.assign(elements);
  scales.assign(block_scales);
  return count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 0.0;
}

}  // namespace opval::ops::common_gemm
