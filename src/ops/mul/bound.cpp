// mul: error model, binary_spec's: the inputs' rounding to acc, then one rounding of the
// result in acc,
//   |y_kernel - y| <= |(a_acc * b_acc) - (a * b)| + u|a_acc * b_acc| + underflow unit,
// times (1+8u)(1+u_dst). The op supplies the symbol of its formula.
#include "ops/mul/mul.hpp"

namespace opval::ops::mul {

std::string_view mul_spec::symbol() const { return "*"; }

}  // namespace opval::ops::mul
