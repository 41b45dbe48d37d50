// erf's suites: the activations' (common_eltwise/activation_spec.cpp): unary shapes from one
// element to vector tails and strided layouts, every generic fill (special values, large
// magnitudes that saturate, wide exponents reaching subnormal results), each contract.
#include "ops/erf/erf.hpp"

namespace opval::ops::erf {

std::vector<std::string> erf_spec::suite(std::string_view tag) const { return activation_spec::suite(tag); }

}  // namespace opval::ops::erf
