#pragma once
// The graph reference's values (opval/graph.hpp's value): making them, reading their
// elements as indices, and their row-major index arithmetic, shared by the structural ops
// and the op nodes.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "opval/graph.hpp"

namespace opval::graph {

// The to_string overloads of opval (dims, dtype) beside graph::to_string(node_role).
using opval::to_string;

/// The most bytes (as f64) one value may take: half this machine's memory, unless set lower
/// (the fuzz targets do). A larger value is an opval::error naming its shape, before any
/// allocation: a hostile or mistaken model must not take the machine down.
std::int64_t max_value_bytes();
void set_max_value_bytes(std::int64_t bytes);
/// Throws the error above when `shape` is too large.
void check_value_size(const dims& shape);

/// A value of `type` and `shape` holding `data` (row-major; its size must be the count).
value make_value(dtype type, dims shape, std::vector<double> data);
/// A zero-filled value of `type` and `shape`.
value zeros(dtype type, const dims& shape);

/// v as an index or extent: saturated to +-2^62 (INT64_MAX as a slice end stays "past the
/// end"); NaN is 0.
std::int64_t as_index(double v);
/// The integer x in type `t` as ONNX's (and C++'s) integer arithmetic has it: wrapped modulo
/// the type's range (booleans: nonzero is 1); floating-point types are left alone.
double wrapped_integer(double x, dtype t);

/// Every element of v as an index.
std::vector<std::int64_t> indices_of(const value& v);

/// An axis of a rank-`rank` tensor, negative counting from the end; nullopt when outside
/// [-rank, rank).
std::optional<int> normalized_axis(std::int64_t axis, int rank);

/// The row-major multi-index of element `linear` of `shape`.
dims unravel(std::int64_t linear, const dims& shape);
/// The row-major position of `index` under `strides`.
std::int64_t position(std::span<const std::int64_t> index, const dims& strides);

/// The value of an opval tensor (any type, any strides) as the graph keeps it, typed `as`.
value value_of_tensor(const tensor& t, dtype as);

}  // namespace opval::graph
