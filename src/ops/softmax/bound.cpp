// softmax: the error model, the family's (common_softmax/softmax_family.hpp): per element
// softmax_numerics.hpp's probability_error, |p^_j - p_j| <= p_j expm1(L_ind_j + L_com) + abs_j,
// which covers any summation order, online (rescaling) softmax and a reciprocal multiply.
#include <span>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/softmax/softmax.hpp"

namespace opval::ops::softmax {

std::vector<error_bound> softmax_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                             std::span<const tensor> in, std::span<const tensor> ref) const {
  return family_bound(p, f, o, in, ref);
}

// The row-shape test: each row normalized by its own sum (or log-sum-exp), so that the
// denominator's error, common to the row, cancels (docs/NUMERICS.md, "The row-shape test").
std::vector<posterior_check> softmax_spec::posterior(const problem& p, const fill_traits&, const bound_options&,
                                                 std::span<const tensor> in, std::span<const tensor> ref,
                                                 std::span<const tensor> out) const {
  return family_posterior(p, in, ref, out);
}

}  // namespace opval::ops::softmax
