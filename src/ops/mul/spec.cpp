// mul: name, fill range and registration (the rest is binary_spec's).
#include <cmath>

#include "ops/common_eltwise/eltwise_fill.hpp"
#include "ops/mul/mul.hpp"

namespace opval::ops::mul {

std::string_view mul_spec::name() const { return "mul"; }
std::string_view mul_spec::summary() const { return "y = a * b, numpy broadcasting"; }

// Products of two `large` values stay below a quarter of the narrowest type's max.
double mul_spec::large_scale(const problem& p) const {
  return std::sqrt(eltwise::safe_magnitude(1e8, 0.25, {p.dt.src, p.dt.wei, p.dt.acc, p.dt.dst}));
}

OPVAL_REGISTER_OP(mul_spec);

}  // namespace opval::ops::mul
