// silu: error model.
//
// Error model (first order in u of acc): the gate sigma = 1/(1 + exp(-x)) carries the exp
// error through d sigma / d exp = -sigma^2, plus one rounding of 1 + exp(-x) and one division
// or reciprocal; then one rounding of the product x * sigma:
//   |y_kernel - y| <= |x| (sigma^2 err_exp(exp(-x)) + sigma (u + div)) + u|y|
// with err_exp = ulp.exp ulps of acc at the value. Any of x/(1+exp(-x)), x*(1/(1+exp(-x))) or
// x*exp(x)/(1+exp(x)) with a 2-ulp expf stays inside. Where exp(-x) may overflow acc (x < -88
// in f32, x < -11 in f16) the kernel may return -0: the bound there is |y|.
#include <cmath>

#include "ops/silu/silu.hpp"

namespace opval::ops::silu {

double silu_spec::eval_error(double x, const eltwise::acc_error_model& m, const problem& p) const {
  return std::fabs(x) * m.sigmoid_gate(x, m.ulps().exp) + m.rounding(exact(x, p));
}
// sup |silu'| = 1.0998 (at x = 2.40)
double silu_spec::lipschitz(const problem&) const { return 1.1; }
std::string silu_spec::error_formula(const problem&) const {
  return "|x|*(s^2*err_exp(exp(-x)) + s*(u + div)) + u|y|, s = sigmoid(x) (|y| where exp(-x) may overflow acc)";
}

}  // namespace opval::ops::silu
