// log_softmax: name, summary and registration; the spec and numerics are softmax's
// (common_softmax/softmax_family.hpp: attributes, contracts, validation, operands, counts
// and fill).
#include <string_view>

#include "opval/op_spec.hpp"
#include "ops/log_softmax/log_softmax.hpp"

namespace opval::ops::log_softmax {

std::string_view log_softmax_spec::name() const { return "log_softmax"; }

std::string_view log_softmax_spec::summary() const {
  return "log_softmax over one axis: x - max - log(sum exp(x - max))";
}

OPVAL_REGISTER_OP(log_softmax_spec);

}  // namespace opval::ops::log_softmax
