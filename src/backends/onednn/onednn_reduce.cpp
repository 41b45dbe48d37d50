// oneDNN reduce (being written).
#include "backends/onednn/onednn_plan.hpp"

namespace opval::onednn {

plan reduce_plan(const problem& p, const std::vector<operand_view>&, const std::vector<operand_view>&,
                const dnnl::engine&) {
  throw refusal{support::unimplemented("onednn backend: reduce not implemented yet")};
}

}  // namespace opval::onednn
