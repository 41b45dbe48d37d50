// relu: name, schema, cost and registration (the rest is activation_spec's).
#include "ops/relu/relu.hpp"

namespace opval::ops::relu {

std::string_view relu_spec::name() const { return "relu"; }
std::string_view relu_spec::summary() const { return "y = max(x, 0): NaN and -0 pass through"; }
const attr_schema& relu_spec::schema() const {
  static const attr_schema s = make_schema();
  return s;
}

double relu_spec::flops_per_element(const problem&) const { return 1; }
// Small integers map to themselves: the `exact` fill gives exact results.
bool relu_spec::exact_on_integers() const { return true; }

OPVAL_REGISTER_OP(relu_spec);

}  // namespace opval::ops::relu
