// gelu: suites.
#include "ops/gelu/gelu.hpp"

namespace opval::ops::gelu {

// activation_spec's suites, once per variant (approximate=none, then approximate=tanh):
// per contract one line at the defaults, then one axis changed at a time: the unary shapes
// and layouts (regression: size 1, rank 0, primes, sizes up to 3x100003, 2-D to 4-D, padded
// rows, stepped innermost dimensions), the fills (smoke: `special`; regression: every
// generic fill but `exact`) and, in regression only, acc_round=rz and denorm=ftz.
std::vector<std::string> gelu_spec::suite(std::string_view tag) const { return activation_spec::suite(tag); }

std::vector<std::string> gelu_spec::variants() const { return {"approximate=none", "approximate=tanh"}; }

}  // namespace opval::ops::gelu
