// relu: suites.
#include "ops/relu/relu.hpp"

namespace opval::ops::relu {

// activation_spec's suites: per contract one line at the defaults, then one axis changed
// at a time: the unary shapes and layouts (regression: size 1, rank 0, primes, sizes up to
// 3x100003, 2-D to 4-D, padded rows, stepped innermost dimensions), the fills (smoke:
// `special`; regression: every generic fill, `exact` included as relu is exact on
// integers) and, in regression only, acc_round=rz and denorm=ftz.
std::vector<std::string> relu_spec::suite(std::string_view tag) const { return activation_spec::suite(tag); }

}  // namespace opval::ops::relu
