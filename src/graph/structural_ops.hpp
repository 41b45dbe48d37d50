#pragma once
// The structural ops of a graph: they move, select, reshape or convert values without
// arithmetic, so their fp64 reference is exact and a stack's result must equal it bit for bit
// (reshape, transpose, concat, split, slice, gather, squeeze, unsqueeze, flatten, expand,
// identity, constant, constant_of_shape, shape, and casts to or from integer types).
#include <string_view>
#include <vector>

#include "graph/node_context.hpp"

namespace opval::graph {

using structural_fn = std::vector<value> (*)(const node_context&);

/// The exact reference of a default-domain op type, or nullptr when it is not structural.
/// A Cast between two floating-point types is not: it rounds, and is the opval op `cast`.
structural_fn find_structural(const node& n);

/// The op types find_structural knows (for docs/GRAPH.md and `opval graph info`).
std::vector<std::string_view> structural_op_types();

}  // namespace opval::graph
