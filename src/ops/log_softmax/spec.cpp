// log_softmax: registration; the spec and numerics are softmax's (src/ops/softmax/).
#include "ops/softmax/softmax_family.hpp"

namespace opval::ops::log_softmax {

/// log_softmax over one axis of an arbitrary shape.
class log_softmax_spec final : public softmax::softmax_family_spec {
 public:
  log_softmax_spec() : softmax_family_spec(true) {}
};

OPVAL_REGISTER_OP(log_softmax_spec);

}  // namespace opval::ops::log_softmax
