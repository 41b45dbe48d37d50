#pragma once
// A node whose inputs one of the stack's fused nodes hides, judged with the nodes that computed
// them: the region the fused node replaced, from the values the stack did give.
#include <functional>
#include <string>
#include <vector>

#include "opval/graph.hpp"
#include "opval/runner.hpp"

namespace opval::graph {

/// The stack's value of a name as the node being judged would read it (what the stack gave, a
/// graph input or an initializer), nullptr when the stack does not expose it.
using stack_value_fn = std::function<const value*(const std::string&)>;

/// The verdict on a region: judged (false: `note` says why not), failed, and the reason (a
/// failure's: the worst element and the bound) and what the region was (`note`).
struct region_verdict {
  bool judged = false;
  bool failed = false;
  std::string reason;
  std::string note;
  std::vector<std::string> nodes;  ///< the region's nodes in execution order, node k last
};

/// Node `k` of `m` together with the nodes before it whose outputs the stack hides (recursively,
/// back to values it gives): the region is recomputed with opval's fp64 references from the
/// region's inputs as the stack gave them, and the stack's outputs of node k (`got`) are held
/// to the region's bound: node k's bound under o's policy on the recomputed inputs, plus each
/// hidden value's own bound carried to node k's outputs to first order (by rerunning the region
/// from the value moved by its bound up and down). Values move through the region only by
/// elementwise ops and structural ones, so that carrying is exact to first order; a region in
/// which a hidden value feeds another kind of op (a matmul, a normalization) is not judged.
region_verdict judge_region(const model& m, std::size_t k, const stack_value_fn& stack_value,
                            const std::vector<const value*>& got, const run_options& o);

}  // namespace opval::graph
