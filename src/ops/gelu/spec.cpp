// gelu: name, schema, its attribute, cost and registration (the rest is activation_spec's).
#include "ops/gelu/gelu.hpp"

namespace opval::ops::gelu {

gelu_params params_of(const problem& p) { return {p.get_choice("approximate") == "tanh"}; }

std::string_view gelu_spec::name() const { return "gelu"; }
std::string_view gelu_spec::summary() const { return "y = x * Phi(x), erf form or tanh approximation"; }
const attr_schema& gelu_spec::schema() const {
  static const attr_schema s = make_schema(choice_attr(
      "approximate", "none", {"none", "tanh"}, "none: 0.5x(1+erf(x/sqrt2)); tanh: the tanh formula"));
  return s;
}

double gelu_spec::flops_per_element(const problem& p) const { return params_of(p).tanh_form ? 10 : 5; }

OPVAL_REGISTER_OP(gelu_spec);

}  // namespace opval::ops::gelu
