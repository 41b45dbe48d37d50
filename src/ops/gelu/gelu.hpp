#pragma once
// gelu: y = x * Phi(x). approximate=none: 0.5 x (1 + erf(x/sqrt2)); approximate=tanh:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), whose reference is that formula itself
// (a kernel asked for the erf form that computes the tanh form fails: they differ by up to
// ~5e-4, thousands of f32 ulps).
// Semantics: gelu(NaN) = NaN, gelu(+Inf) = +Inf, gelu(-Inf) = -0 (the limit; the formula's
// -Inf * 0 = NaN is not accepted).
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_eltwise/activation_spec.hpp"

namespace opval::ops::gelu {

/// gelu's own attributes, read from the problem.
struct gelu_params {
  bool tanh_form = false;  ///< approximate=tanh
};

gelu_params params_of(const problem& p);

class gelu_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override;
  std::string_view summary() const override;
  std::vector<std::string_view> contract_options() const override {
    return {"acc_round", "denorm", "dst_round", "ulp:erf", "ulp:exp", "ulp:tanh", "ulp:div"};
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
  std::vector<std::string> variants() const override;
};

}  // namespace opval::ops::gelu
