// mul: suites.
#include "ops/mul/mul.hpp"

namespace opval::ops::mul {

// binary_spec's suites, per contract one line at the defaults, then one axis changed at a
// time: the broadcasting patterns (same shape, scalar on either side, row, column, outer
// product, 4-D, padded and stepped layouts), the fills (smoke: `special`; regression: every
// generic fill, `exact` included as small integers give exact results) and, in regression
// only, acc_round=rz and denorm=ftz.
std::vector<std::string> mul_spec::suite(std::string_view tag) const { return binary_spec::suite(tag); }

}  // namespace opval::ops::mul
