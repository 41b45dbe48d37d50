// softmax: the fp64 reference and the contract-exact emulation, the family's row by row
// (common_softmax/softmax_family.hpp) in the probability form; the row numerics are
// softmax_numerics.hpp's reference_row and simulate_row.
#include <span>

#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/softmax/softmax.hpp"

namespace opval::ops::softmax {

void softmax_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  family_reference(p, in, out);
}

void softmax_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  family_simulate(p, in, out);
}

}  // namespace opval::ops::softmax
