// tanh's fp64 reference (the C library's tanh in double: accurate to an ulp of double, ~2^29
// times finer than f32's) and the contract's kernel (the sim backend): tanh evaluated in
// double and rounded once to acc, i.e. correctly rounded, the most accurate kernel possible.
#include <cmath>

#include "ops/tanh/tanh.hpp"

namespace opval::ops::tanh {

double tanh_spec::exact(double x, const problem&) const { return std::tanh(x); }

double tanh_spec::at_infinity(bool negative, const problem&) const { return negative ? -1.0 : 1.0; }

double tanh_spec::stepwise(double x, const eltwise::acc_steps& s, const problem&) const {
  return s.fn(std::tanh(x));
}

}  // namespace opval::ops::tanh
