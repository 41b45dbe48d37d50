// relu: f in fp64 (the reference) and as the contract's kernel computes it (the emulation).
#include <limits>

#include "ops/common_eltwise/activations.hpp"
#include "ops/relu/relu.hpp"

namespace opval::ops::relu {

double relu_spec::exact(double x, const problem&) const { return eltwise::relu_exact(x); }
double relu_spec::at_infinity(bool negative, const problem&) const {
  return negative ? 0.0 : std::numeric_limits<double>::infinity();
}
double relu_spec::stepwise(double x, const eltwise::acc_steps&, const problem& p) const {
  return exact(x, p);
}

}  // namespace opval::ops::relu
