#pragma once
// Input layouts shared by the elementwise ops: row-padded and stepped (sliced) inputs, so
// kernels meet non-contiguous memory, not only dense arrays.
#include <cstdint>
#include <vector>

#include "opval/attr.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::eltwise {

/// The attribute `stride_pad`: padding after each innermost row, also the view's offset.
attr_def stride_pad_attr();
/// The attribute `step`: the innermost stride (x[..., ::step]).
attr_def step_attr();

/// The layout of an input of logical `shape` viewed as a slice of a larger array: the
/// innermost dimension advances by `step` elements (x[..., ::step]), each row of the innermost
/// dimension is followed by `pad` unused elements, and the view starts `pad` elements into
/// its allocation (x[..., pad:]). pad=0, step=1 is the dense row-major layout.
layout strided_layout(const dims& shape, std::int64_t pad, std::int64_t step);

/// strided_layout with the problem's stride_pad and step.
layout input_layout(const problem& p, const dims& shape);

/// Throws opval::error naming `attr` when a shape has a non-positive extent.
void check_extents(const dims& shape, const char* attr);

}  // namespace opval::ops::eltwise
