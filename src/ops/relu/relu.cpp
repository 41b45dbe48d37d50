// relu: y = x < 0 ? +0 : x, i.e. clamp_min(x, 0) as PyTorch computes it (and as the matmul
// epilogue's relu does).
// Semantics: relu(NaN) = NaN (NaN < 0 is false: it passes through); relu(-0) = -0 (not below
// zero, so it passes through; a kernel returning +0 is reported as a -0 mismatch, which never
// fails a case); relu(-Inf) = +0, relu(+Inf) = +Inf. Exact in any acc that holds x, so its
// compute bound is 0 (plus the rounding of x into acc when acc is narrower than the input).
#include <limits>

#include "ops/common_eltwise/activation_spec.hpp"
#include "ops/common_eltwise/activations.hpp"

namespace opval::ops::relu {

class relu_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override { return "relu"; }
  std::string_view summary() const override { return "y = max(x, 0): NaN and -0 pass through"; }
  const attr_schema& schema() const override {
    static const attr_schema s = make_schema();
    return s;
  }

 protected:
  double flops_per_element(const problem&) const override { return 1; }
  double exact(double x, const problem&) const override { return eltwise::relu_exact(x); }
  double at_infinity(bool negative, const problem&) const override {
    return negative ? 0.0 : std::numeric_limits<double>::infinity();
  }
  double stepwise(double x, const eltwise::acc_steps&, const problem& p) const override { return exact(x, p); }
  double eval_error(double, const eltwise::acc_error_model&, const problem&) const override { return 0.0; }
  double lipschitz(const problem&) const override { return 1.0; }
  std::string error_formula(const problem&) const override { return "0 (relu is exact in acc)"; }
  bool exact_on_integers() const override { return true; }
};

OPVAL_REGISTER_OP(relu_spec);

}  // namespace opval::ops::relu
