// softmax: name, summary and registration; attributes, contracts, validation, operands,
// counts and fill are the family's (common_softmax/softmax_family.hpp), shared with
// log_softmax.
#include <string_view>

#include "opval/op_spec.hpp"
#include "ops/softmax/softmax.hpp"

namespace opval::ops::softmax {

std::string_view softmax_spec::name() const { return "softmax"; }

std::string_view softmax_spec::summary() const {
  return "softmax over one axis: exp(x - max) / sum exp(x - max)";
}

OPVAL_REGISTER_OP(softmax_spec);

}  // namespace opval::ops::softmax
