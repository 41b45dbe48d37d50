// silu: f in fp64 (the reference) and as the contract's kernel computes it (the emulation).
#include <cmath>
#include <limits>

#include "ops/common_eltwise/activations.hpp"
#include "ops/silu/silu.hpp"

namespace opval::ops::silu {

double silu_spec::exact(double x, const problem&) const { return eltwise::silu_exact(x); }
double silu_spec::at_infinity(bool negative, const problem&) const {
  return negative ? -0.0 : std::numeric_limits<double>::infinity();
}
double silu_spec::stepwise(double x, const eltwise::acc_steps& s, const problem&) const {
  const double e = s.fn(std::exp(-x));
  return s.div(x, s.add(1.0, e));
}

}  // namespace opval::ops::silu
