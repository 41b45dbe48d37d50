#pragma once
// One node through opval's fp64 reference, as the graph reference runs it.
#include <vector>

#include "graph/node_context.hpp"
#include "opval/graph.hpp"

namespace opval::graph {

/// The node's outputs from its inputs in `c`: an op node through its opval op's fp64 reference
/// (or exactly, when the mapping finds no arithmetic on these values), a structural node
/// through its exact reference; `record` says which (role, problem). Throws
/// graph::unsupported for a node opval cannot run, opval::error for one it cannot run on these
/// values.
std::vector<value> node_reference(const node_context& c, node_run& record);

}  // namespace opval::graph
