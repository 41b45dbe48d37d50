// tanh's error bound, first order in u of acc:
//   |y_kernel - y| <= err_tanh(tanh x) = ulps.tanh ulps of acc at the value (+ underflow unit)
// before the rounding to dst; the activations' base adds L |x_acc - x| with L = sup|tanh'| = 1
// for the rounding of x into acc, and the (1 + 8u)(1 + u_dst) second-order factor. Relative to
// the value, so near zero (tanh x ~ x) the bound is as tight as x's own ulp: a kernel whose
// formula cancels there, (1 - e^-2x)/(1 + e^-2x) or 2 sigmoid(2x) - 1, is rightly failed, and
// one clamping to +-1 too early (|x| >= 4, where tanh = 0.99933) fails where acc and dst resolve
// it: f32 (tests); with a bf16 output tanh(4) already rounds to 1.
#include "ops/tanh/tanh.hpp"

#include <cmath>

namespace opval::ops::tanh {

double tanh_spec::eval_error(double x, const eltwise::acc_error_model& m, const problem&) const {
  return m.function(std::tanh(x), m.ulps().tanh);
}

double tanh_spec::lipschitz(const problem&) const { return 1.0; }

std::string tanh_spec::error_formula(const problem&) const { return "err_tanh(tanh x) (ulps.tanh ulps of acc at y)"; }

}  // namespace opval::ops::tanh
