// div: error model, binary_spec's: the inputs' rounding to acc, then one rounding of the
// quotient in acc (IEEE division is correctly rounded),
//   |y_kernel - y| <= |(a_acc / b_acc) - (a / b)| + u|a_acc / b_acc| + underflow unit,
// times (1+8u)(1+u_dst); the runner adds the rounding to dst. A kernel multiplying by an f32
// reciprocal (two roundings in acc) stays within it; one from a rough reciprocal does not.
#include "ops/div/div.hpp"

namespace opval::ops::div {

std::string_view div_spec::symbol() const { return "/"; }

}  // namespace opval::ops::div
