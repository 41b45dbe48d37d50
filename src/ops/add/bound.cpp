// add: error model, binary_spec's: the inputs' rounding to acc, then one rounding of the
// result in acc,
//   |y_kernel - y| <= |(a_acc + b_acc) - (a + b)| + u|a_acc + b_acc| + underflow unit,
// times (1+8u)(1+u_dst). The op supplies the symbol of its formula.
#include "ops/add/add.hpp"

namespace opval::ops::add {

std::string_view add_spec::symbol() const { return "+"; }

}  // namespace opval::ops::add
