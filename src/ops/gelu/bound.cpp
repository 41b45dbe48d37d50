// gelu: error model.
//
// Error model (first order in u of acc), y = x * phi with the gate phi = (1 + g(a))/2:
//   |y_kernel - y| <= |x| (phi'(a) |da| + err_gate) + u|y| + underflow
// erf form:  a = x/sqrt2 with |da| <= (2u + max(0, div - u))|a| (constant, product or
//            division), phi'(a) = exp(-a^2)/sqrt(pi), err_gate = (err_erf(g) + u(1 + |g|))/2.
// tanh form: a = z = sqrt(2/pi)(x + 0.044715 x^3) with |dz| <= 8u|z| (two constants, three
//            products, a same-sign sum and the scaling: 7 roundings, one spare),
//            phi'(z) = (1 - tanh^2 z)/2, err_gate = the larger of the tanh form's
//            (err_tanh(g) + u(1 + |g|))/2 and the sigmoid form's (x * sigmoid(2z) via exp).
// err_f = ulp.f ulps of acc at the value. Where 1 + g cancels (x < -3) the absolute error
// ~|x| k u dominates the tiny y: that is the erf formula's nature, not slack.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ops/common_eltwise/activations.hpp"
#include "ops/gelu/gelu.hpp"

namespace opval::ops::gelu {

double gelu_spec::eval_error(double x, const eltwise::acc_error_model& m, const problem& p) const {
  double gate;
  if (params_of(p).tanh_form) {
    const double z = eltwise::gelu_tanh_argument(x), th = std::tanh(z);
    const double dz = 8 * m.rounding(z);
    gate = 0.5 * (1 - th * th) * dz +
           std::max(m.half_one_plus_gate(th, m.ulps().tanh), m.sigmoid_gate(2 * z, m.ulps().exp));
  } else {
    const double t = x * std::numbers::sqrt2 / 2;
    const double dt = 2 * m.rounding(t) + std::max(0.0, m.div_relative() - m.u()) * std::fabs(t);
    gate = std::exp(-t * t) / std::sqrt(std::numbers::pi) * dt + m.half_one_plus_gate(std::erf(t), m.ulps().erf);
  }
  // the product x * gate, and 0.5 * x underflowing
  return std::fabs(x) * gate + m.rounding(exact(x, p)) + m.rounding(0.0);
}

// sup |gelu'| = 1.1289 (erf form, at x = sqrt2); the tanh form's is 1.1295.
double gelu_spec::lipschitz(const problem&) const { return 1.13; }

std::string gelu_spec::error_formula(const problem& p) const {
  if (params_of(p).tanh_form)
    return "|x|*((1-tanh^2 z)/2*8u|z| + max((err_tanh(tanh z) + u(1+|tanh z|))/2, sigmoid-form(2z))) + u|y|";
  return "|x|*(exp(-t^2)/sqrt(pi)*(2u+div)|t| + (err_erf(erf t) + u(1+|erf t|))/2) + u|y|, t = x/sqrt2";
}

}  // namespace opval::ops::gelu
