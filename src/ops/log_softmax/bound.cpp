// log_softmax: the error model, the family's (common_softmax/softmax_family.hpp): per element
// softmax_numerics.hpp's log_probability_error, |y^_j - y_j| <= delta_j + L_s +
// ulps.log eps (log s + L_s) + uf_acc (+ u|y_j| when the subtraction is not the output
// rounding); a kernel computing x - (max + log s) is rejected.
#include <span>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/log_softmax/log_softmax.hpp"

namespace opval::ops::log_softmax {

std::vector<error_bound> log_softmax_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                                 std::span<const tensor> in, std::span<const tensor> ref) const {
  return family_bound(p, f, o, in, ref);
}

// The row-shape test: each row normalized by its own sum (or log-sum-exp), so that the
// denominator's error, common to the row, cancels (docs/NUMERICS.md, "The row-shape test").
std::vector<posterior_check> log_softmax_spec::posterior(const problem& p, const fill_traits&, const bound_options&,
                                                 std::span<const tensor> in, std::span<const tensor> ref,
                                                 std::span<const tensor> out) const {
  return family_posterior(p, in, ref, out);
}

}  // namespace opval::ops::log_softmax
