// erf's error bound, first order in u of acc:
//   |y_kernel - y| <= err_erf(erf x) = ulps.erf ulps of acc at the value (+ underflow unit)
// before the rounding to dst; the activations' base adds L |x_acc - x| with L = sup|erf'| =
// 2/sqrt(pi) for the rounding of x into acc, and the (1 + 8u)(1 + u_dst) second-order factor.
// Relative to the value, so near zero (erf x ~ 1.13 x) the bound is as fine as x's own ulp: a
// kernel computing 1 - erfc(x) cancels there and is rightly failed.
#include "ops/erf/erf.hpp"

#include <cmath>
#include <numbers>

namespace opval::ops::erf {

double erf_spec::eval_error(double x, const eltwise::acc_error_model& m, const problem&) const {
  return m.function(std::erf(x), m.ulps().erf);
}

double erf_spec::lipschitz(const problem&) const { return 2 * std::numbers::inv_sqrtpi; }

std::string erf_spec::error_formula(const problem&) const { return "err_erf(erf x) (ulps.erf ulps of acc at y)"; }

}  // namespace opval::ops::erf
