// add: name, fill range and registration (the rest is binary_spec's).
#include "ops/add/add.hpp"
#include "ops/common_eltwise/eltwise_fill.hpp"

namespace opval::ops::add {

std::string_view add_spec::name() const { return "add"; }
std::string_view add_spec::summary() const { return "y = a + b, numpy broadcasting"; }

double add_spec::large_scale(const problem& p) const {
  return eltwise::safe_magnitude(1e4, 0.25, {p.dt.src, p.dt.wei, p.dt.acc, p.dt.dst});
}

OPVAL_REGISTER_OP(add_spec);

}  // namespace opval::ops::add
