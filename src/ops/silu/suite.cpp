// silu: suites.
#include "ops/silu/silu.hpp"

namespace opval::ops::silu {

// activation_spec's suites: per contract one line at the defaults, then one axis changed
// at a time: the unary shapes and layouts (regression: size 1, rank 0, primes, sizes up to
// 3x100003, 2-D to 4-D, padded rows, stepped innermost dimensions), the fills (smoke:
// `special`; regression: every generic fill but `exact`) and, in regression only,
// acc_round=rz and denorm=ftz.
std::vector<std::string> silu_spec::suite(std::string_view tag) const { return activation_spec::suite(tag); }

}  // namespace opval::ops::silu
