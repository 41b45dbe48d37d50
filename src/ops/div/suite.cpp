// div: suites.
#include "ops/div/div.hpp"

namespace opval::ops::div {

// binary_spec's suites (as add's and mul's): per contract one line at the defaults, then one
// axis changed at a time: the broadcasting patterns, the fills (`exact` divides by zero too)
// and, in regression only, acc_round=rz and denorm=ftz.
std::vector<std::string> div_spec::suite(std::string_view tag) const { return binary_spec::suite(tag); }

}  // namespace opval::ops::div
