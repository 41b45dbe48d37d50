#pragma once
// erf: y = erf(x), the error function (PyTorch's torch.erf, ONNX Erf, the C library's erf): the
// core of the exact gelu, x/2 (1 + erf(x/sqrt 2)), which graphs spell out node by node.
// Semantics: erf(NaN) = NaN, erf(+-Inf) = +-1, erf(-0) = -0; odd, |y| < 1 for finite x, and
// erf(x) rounds to +-1 in f32 for |x| >= 3.92 (in bf16 and f16 earlier).
//
// Error model: one elementary function accurate to ulps.erf ulps of acc at the value (the
// contract's function_accuracy, 2 by default), plus the rounding of the input into acc, times
// erf's Lipschitz constant 2/sqrt(pi). A kernel computing erf as 1 - erfc(x) loses all
// relative accuracy near zero and fails there; polynomial, erfc-for-large-|x| and correctly
// rounded kernels pass.
#include <string>
#include <string_view>

#include "ops/common_eltwise/activation_spec.hpp"

namespace opval::ops::erf {

class erf_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override { return "erf"; }
  std::string_view summary() const override;
  std::vector<std::string_view> contract_options() const override {
    return {"acc_round", "denorm", "dst_round", "ulp:erf"};
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

}  // namespace opval::ops::erf
