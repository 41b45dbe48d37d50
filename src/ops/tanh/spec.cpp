// tanh: the attributes, contracts, validation, operands and fill are the activations'
// (common_eltwise/activation_spec); this file names the op, counts it and registers it.
#include "ops/tanh/tanh.hpp"

namespace opval::ops::tanh {

std::string_view tanh_spec::summary() const { return "y = tanh(x): odd, saturating to +-1"; }

const attr_schema& tanh_spec::schema() const {
  static const attr_schema s = make_schema();
  return s;
}

// One elementary function per element.
double tanh_spec::flops_per_element(const problem&) const { return 1; }

}  // namespace opval::ops::tanh

namespace {
using opval::ops::tanh::tanh_spec;
OPVAL_REGISTER_OP(tanh_spec);
}  // namespace
