// silu: name, schema, cost and registration (the rest is activation_spec's).
#include "ops/silu/silu.hpp"

namespace opval::ops::silu {

std::string_view silu_spec::name() const { return "silu"; }
std::string_view silu_spec::summary() const { return "y = x * sigmoid(x) (swish)"; }
const attr_schema& silu_spec::schema() const {
  static const attr_schema s = make_schema();
  return s;
}

// negate, exp, add, divide
double silu_spec::flops_per_element(const problem&) const { return 4; }

OPVAL_REGISTER_OP(silu_spec);

}  // namespace opval::ops::silu
