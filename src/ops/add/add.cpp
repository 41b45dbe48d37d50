// add: y = a + b with numpy broadcasting; one rounding in acc (see binary_spec.hpp).
#include "ops/common_eltwise/binary_spec.hpp"
#include "ops/common_eltwise/eltwise_fill.hpp"

namespace opval::ops::add {

class add_spec final : public eltwise::binary_spec {
 public:
  std::string_view name() const override { return "add"; }
  std::string_view summary() const override { return "y = a + b, numpy broadcasting"; }

 protected:
  double apply(double a, double b) const override { return a + b; }
  double large_scale(const problem& p) const override {
    return eltwise::safe_magnitude(1e4, 0.25, {p.dt.src, p.dt.wei, p.dt.acc, p.dt.dst});
  }
  std::string_view symbol() const override { return "+"; }
};

OPVAL_REGISTER_OP(add_spec);

}  // namespace opval::ops::add
