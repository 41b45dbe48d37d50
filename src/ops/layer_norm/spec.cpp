// layer_norm: the attributes, validation, operands and fill are the trailing-axes norms' own
// (common_norm); this file names the op and registers it.
#include "ops/layer_norm/layer_norm.hpp"

namespace opval::ops::layer_norm {

std::string_view layer_norm_spec::summary() const {
  return "layer normalization over the last norm_axes dims: (x-mean)*rsqrt(var+eps)*gamma+beta";
}

}  // namespace opval::ops::layer_norm

namespace {
using opval::ops::layer_norm::layer_norm_spec;
OPVAL_REGISTER_OP(layer_norm_spec);
}  // namespace
