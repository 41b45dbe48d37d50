#pragma once
// tanh: y = tanh(x), the hyperbolic tangent (PyTorch's torch.tanh, ONNX Tanh, oneDNN's
// eltwise_tanh).
// Semantics: tanh(NaN) = NaN, tanh(+-Inf) = +-1, tanh(-0) = -0; odd, |y| < 1 for finite x, and
// tanh(x) rounds to +-1 in f32 for |x| >= 9.01 (in bf16 and f16 much earlier).
//
// Error model: one elementary function accurate to ulps.tanh ulps of acc at the value (the
// contract's function_accuracy, 2 by default), plus the rounding of the input into acc
// (tanh is 1-Lipschitz). A kernel computing tanh(x) as (1 - e^-2x)/(1 + e^-2x) loses all
// relative accuracy near zero and fails there; expm1-based, polynomial-near-zero and
// correctly rounded kernels pass.
#include <string>
#include <string_view>

#include "ops/common_eltwise/activation_spec.hpp"

namespace opval::ops::tanh {

class tanh_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override { return "tanh"; }
  std::string_view summary() const override;
  std::vector<std::string_view> contract_options() const override {
    return {"acc_round", "denorm", "dst_round", "ulp:tanh"};
  }
  const attr_schema& schema() const override;
  std::vector<std::string> suite(std::string_view tag) const override;

 protected:
  double flops_per_element(const problem& p) const override;
  double exact(double x, const problem& p) const override;
  double at_infinity(bool negative, const problem& p) const override;
  double stepwise(double x, const eltwise::acc_steps& s, const problem& p) const override;
  double eval_error(double x, const eltwise::acc_error_model& m, const problem& p) const override;
  double lipschitz(const problem& p) const override;
  std::string error_formula(const problem& p) const override;
};

}  // namespace opval::ops::tanh
