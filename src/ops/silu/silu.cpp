// silu (swish): y = x * sigmoid(x) = x / (1 + exp(-x)).
// Semantics: silu(NaN) = NaN, silu(+Inf) = +Inf, silu(-Inf) = -0 (the limit; the formula's
// -Inf/Inf = NaN is not accepted).
//
// Error model (first order in u of acc): the gate sigma = 1/(1 + exp(-x)) carries the exp
// error through d sigma / d exp = -sigma^2, plus one rounding of 1 + exp(-x) and one division
// or reciprocal; then one rounding of the product x * sigma:
//   |y_kernel - y| <= |x| (sigma^2 err_exp(exp(-x)) + sigma (u + div)) + u|y|
// with err_exp = ulp.exp ulps of acc at the value. Any of x/(1+exp(-x)), x*(1/(1+exp(-x))) or
// x*exp(x)/(1+exp(x)) with a 2-ulp expf stays inside. Where exp(-x) may overflow acc (x < -88
// in f32, x < -11 in f16) the kernel may return -0: the bound there is |y|.
#include <cmath>
#include <limits>

#include "ops/common_eltwise/activation_spec.hpp"
#include "ops/common_eltwise/activations.hpp"

namespace opval::ops::silu {

class silu_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override { return "silu"; }
  std::string_view summary() const override { return "y = x * sigmoid(x) (swish)"; }
  const attr_schema& schema() const override {
    static const attr_schema s = make_schema();
    return s;
  }

 protected:
  // negate, exp, add, divide
  double flops_per_element(const problem&) const override { return 4; }
  double exact(double x, const problem&) const override { return eltwise::silu_exact(x); }
  double at_infinity(bool negative, const problem&) const override {
    return negative ? -0.0 : std::numeric_limits<double>::infinity();
  }
  double stepwise(double x, const eltwise::acc_steps& s, const problem&) const override {
    const double e = s.fn(std::exp(-x));
    return s.div(x, s.add(1.0, e));
  }
  double eval_error(double x, const eltwise::acc_error_model& m, const problem& p) const override {
    return std::fabs(x) * m.sigmoid_gate(x, m.ulps().exp) + m.rounding(exact(x, p));
  }
  // sup |silu'| = 1.0998 (at x = 2.40)
  double lipschitz(const problem&) const override { return 1.1; }
  std::string error_formula(const problem&) const override {
    return "|x|*(s^2*err_exp(exp(-x)) + s*(u + div)) + u|y|, s = sigmoid(x) (|y| where exp(-x) may overflow acc)";
  }
};

OPVAL_REGISTER_OP(silu_spec);

}  // namespace opval::ops::silu
