#pragma once
// Explaining a failure by a known mechanism (op_spec::hypotheses): a kernel whose every output
// element is what the mechanism gives, where the mechanism itself breaks the bound, computed
// that way (docs/NUMERICS.md, "Explaining a failure").
#include <span>
#include <string>
#include <vector>

#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval {

/// The explanation of the first of p's hypotheses that explains `outs`: its simulation on `ins`
/// is beyond `bounds` (per element, contiguous like `refs`) of the fp64 reference somewhere,
/// and every output element lies within twice the bound of it, plus the rounding of the float
/// steps both compute at the hypothesis's magnitude. "" when none does, or when an output has
/// no bound.
std::string matching_hypothesis(const problem& p, std::span<const tensor> ins, const std::vector<tensor>& refs,
                                const std::vector<tensor>& outs, const std::vector<const tensor*>& bounds);

}  // namespace opval
