// mul: y = a * b with numpy broadcasting; one rounding in acc (see binary_spec.hpp).
#include <cmath>

#include "ops/common_eltwise/binary_spec.hpp"
#include "ops/common_eltwise/eltwise_fill.hpp"

namespace opval::ops::mul {

class mul_spec final : public eltwise::binary_spec {
 public:
  std::string_view name() const override { return "mul"; }
  std::string_view summary() const override { return "y = a * b, numpy broadcasting"; }

 protected:
  double apply(double a, double b) const override { return a * b; }
  // Products of two `large` values stay below a quarter of the narrowest type's max.
  double large_scale(const problem& p) const override {
    return std::sqrt(eltwise::safe_magnitude(1e8, 0.25, {p.dt.src, p.dt.wei, p.dt.acc, p.dt.dst}));
  }
  std::string_view symbol() const override { return "*"; }
};

OPVAL_REGISTER_OP(mul_spec);

}  // namespace opval::ops::mul
