// erf's fp64 reference (the C library's erf in double: accurate to an ulp or two of double,
// ~2^29 times finer than f32's) and the contract's kernel (the sim backend): erf evaluated in
// double and rounded once to acc, i.e. correctly rounded, the most accurate kernel possible.
#include <cmath>

#include "ops/erf/erf.hpp"

namespace opval::ops::erf {

double erf_spec::exact(double x, const problem&) const { return std::erf(x); }

double erf_spec::at_infinity(bool negative, const problem&) const { return negative ? -1.0 : 1.0; }

double erf_spec::stepwise(double x, const eltwise::acc_steps& s, const problem&) const { return s.fn(std::erf(x)); }

}  // namespace opval::ops::erf
