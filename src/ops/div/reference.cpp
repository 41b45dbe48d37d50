// div: the operation in double; binary_spec applies it to the exact inputs (the reference)
// and to the inputs as the kernel holds them in acc, rounded once (the emulation).
#include "ops/div/div.hpp"

namespace opval::ops::div {

double div_spec::apply(double a, double b) const { return a / b; }

}  // namespace opval::ops::div
