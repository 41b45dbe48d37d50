// gelu: f in fp64 (the reference) and as the contract's kernel computes it (the emulation).
#include <cmath>
#include <limits>
#include <numbers>

#include "ops/common_eltwise/activations.hpp"
#include "ops/gelu/gelu.hpp"

namespace opval::ops::gelu {

double gelu_spec::exact(double x, const problem& p) const {
  return params_of(p).tanh_form ? eltwise::gelu_tanh_exact(x) : eltwise::gelu_erf_exact(x);
}
double gelu_spec::at_infinity(bool negative, const problem&) const {
  return negative ? -0.0 : std::numeric_limits<double>::infinity();
}

double gelu_spec::stepwise(double x, const eltwise::acc_steps& s, const problem& p) const {
  double g;
  if (params_of(p).tanh_form) {
    const double x3 = s.mul(s.mul(x, x), x);
    const double inner = s.add(x, s.mul(s.constant(eltwise::gelu_kappa), x3));
    g = s.fn(std::tanh(s.mul(s.constant(eltwise::sqrt_2_over_pi), inner)));
  } else {
    g = s.fn(std::erf(s.mul(x, s.constant(std::numbers::sqrt2 / 2))));
  }
  return s.mul(s.mul(0.5, x), s.add(1.0, g));
}

}  // namespace opval::ops::gelu
