// oneDNN layer_norm (being written).
#include "backends/onednn/onednn_plan.hpp"

namespace opval::onednn {

plan layer_norm_plan(const problem& p, const std::vector<operand_view>&, const std::vector<operand_view>&,
                const dnnl::engine&) {
  throw refusal{support::unimplemented("onednn backend: layer_norm not implemented yet")};
}

}  // namespace opval::onednn
