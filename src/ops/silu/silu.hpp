#pragma once
// silu (swish): y = x * sigmoid(x) = x / (1 + exp(-x)).
// Semantics: silu(NaN) = NaN, silu(+Inf) = +Inf, silu(-Inf) = -0 (the limit; the formula's
// -Inf/Inf = NaN is not accepted).
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_eltwise/activation_spec.hpp"

namespace opval::ops::silu {

class silu_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override;
  std::string_view summary() const override;
  std::vector<std::string_view> contract_options() const override {
    return {"acc_round", "denorm", "dst_round", "ulp:exp", "ulp:div"};
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

}  // namespace opval::ops::silu
