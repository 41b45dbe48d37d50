// softmax: registration; the spec is shared with log_softmax (softmax_family.hpp).
#include "ops/softmax/softmax_family.hpp"

namespace opval::ops::softmax {

/// softmax over one axis of an arbitrary shape.
class softmax_spec final : public softmax_family_spec {
 public:
  softmax_spec() : softmax_family_spec(false) {}
};

OPVAL_REGISTER_OP(softmax_spec);

}  // namespace opval::ops::softmax
