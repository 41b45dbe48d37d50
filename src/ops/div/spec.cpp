// div: name, fill range and registration (the rest is binary_spec's).
#include <cmath>

#include "ops/common_eltwise/eltwise_fill.hpp"
#include "ops/div/div.hpp"

namespace opval::ops::div {

std::string_view div_spec::name() const { return "div"; }
std::string_view div_spec::summary() const { return "y = a / b, numpy broadcasting"; }

// As mul's: a quotient of a `large` value by a small one stays below a quarter of the
// narrowest type's max as often as a product of two large ones does; beyond, the compare's
// overflow rule expects the infinity.
double div_spec::large_scale(const problem& p) const {
  return std::sqrt(eltwise::safe_magnitude(1e8, 0.25, {p.dt.src, p.dt.wei, p.dt.acc, p.dt.dst}));
}

OPVAL_REGISTER_OP(div_spec);

}  // namespace opval::ops::div
