// gelu: y = x * Phi(x). approximate=none: 0.5 x (1 + erf(x/sqrt2)); approximate=tanh:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), whose reference is that formula itself
// (a kernel asked for the erf form that computes the tanh form fails: they differ by up to
// ~5e-4, thousands of f32 ulps).
// Semantics: gelu(NaN) = NaN, gelu(+Inf) = +Inf, gelu(-Inf) = -0 (the limit; the formula's
// -Inf * 0 = NaN is not accepted).
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
#include <cmath>
#include <limits>
#include <numbers>

#include "ops/common_eltwise/activation_spec.hpp"
#include "ops/common_eltwise/activations.hpp"

namespace opval::ops::gelu {
namespace {

bool tanh_form(const problem& p) { return p.get_choice("approximate") == "tanh"; }

}  // namespace

class gelu_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override { return "gelu"; }
  std::string_view summary() const override { return "y = x * Phi(x), erf form or tanh approximation"; }
  const attr_schema& schema() const override {
    static const attr_schema s = make_schema(choice_attr(
        "approximate", "none", {"none", "tanh"}, "none: 0.5x(1+erf(x/sqrt2)); tanh: the tanh formula"));
    return s;
  }

 protected:
  double flops_per_element(const problem& p) const override { return tanh_form(p) ? 10 : 5; }

  double exact(double x, const problem& p) const override {
    return tanh_form(p) ? eltwise::gelu_tanh_exact(x) : eltwise::gelu_erf_exact(x);
  }
  double at_infinity(bool negative, const problem&) const override {
    return negative ? -0.0 : std::numeric_limits<double>::infinity();
  }

  double stepwise(double x, const eltwise::acc_steps& s, const problem& p) const override {
    double g;
    if (tanh_form(p)) {
      const double x3 = s.mul(s.mul(x, x), x);
      const double inner = s.add(x, s.mul(s.constant(eltwise::gelu_kappa), x3));
      g = s.fn(std::tanh(s.mul(s.constant(eltwise::sqrt_2_over_pi), inner)));
    } else {
      g = s.fn(std::erf(s.mul(x, s.constant(std::numbers::sqrt2 / 2))));
    }
    return s.mul(s.mul(0.5, x), s.add(1.0, g));
  }

  double eval_error(double x, const eltwise::acc_error_model& m, const problem& p) const override {
    double gate;
    if (tanh_form(p)) {
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
  double lipschitz(const problem&) const override { return 1.13; }

  std::string error_formula(const problem& p) const override {
    if (tanh_form(p))
      return "|x|*((1-tanh^2 z)/2*8u|z| + max((err_tanh(tanh z) + u(1+|tanh z|))/2, sigmoid-form(2z))) + u|y|";
    return "|x|*(exp(-t^2)/sqrt(pi)*(2u+div)|t| + (err_erf(erf t) + u(1+|erf t|))/2) + u|y|, t = x/sqrt2";
  }

  std::vector<std::string> variants() const override { return {"approximate=none", "approximate=tanh"}; }
};

OPVAL_REGISTER_OP(gelu_spec);

}  // namespace opval::ops::gelu
