// erf: the attributes, contracts, validation, operands and fill are the activations'
// (common_eltwise/activation_spec); this file names the op, counts it and registers it.
#include "ops/erf/erf.hpp"

namespace opval::ops::erf {

std::string_view erf_spec::summary() const { return "y = erf(x): the error function, odd, saturating to +-1"; }

const attr_schema& erf_spec::schema() const {
  static const attr_schema s = make_schema();
  return s;
}

// One elementary function per element.
double erf_spec::flops_per_element(const problem&) const { return 1; }

}  // namespace opval::ops::erf

namespace {
using opval::ops::erf::erf_spec;
OPVAL_REGISTER_OP(erf_spec);
}  // namespace
