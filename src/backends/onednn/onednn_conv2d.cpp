// oneDNN conv2d (being written).
#include "backends/onednn/onednn_plan.hpp"

namespace opval::onednn {

plan conv2d_plan(const problem& p, const std::vector<operand_view>&, const std::vector<operand_view>&,
                const dnnl::engine&) {
  throw refusal{support::unimplemented("onednn backend: conv2d not implemented yet")};
}

}  // namespace opval::onednn
