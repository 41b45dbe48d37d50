#pragma once
// The MISTRUSTED check that needs a second kernel run: the kernel is re-run with one input
// re-filled from another seed (the op's perturbed_input). An output that stays bitwise
// identical while the reference moves beyond twice its bound ignores that input.
#include <cstdint>
#include <string>
#include <vector>

#include "core/memory_checks.hpp"
#include "core/output_judging.hpp"

namespace opval::detail {

/// The finding ("" when the output followed its input), from the case's inputs, outputs, fp64
/// references and judgements; the second run goes through `kc`, so its memory checks apply.
std::string perturbation_finding(const problem& p, backend& b, std::uint64_t seed, kernel_checks& kc,
                                 const std::vector<tensor>& ins, const std::vector<tensor>& outs,
                                 const std::vector<tensor>& refs, const std::vector<judgement>& js);

}  // namespace opval::detail
