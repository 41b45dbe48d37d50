#pragma once
// relu: y = x < 0 ? +0 : x, i.e. clamp_min(x, 0) as PyTorch computes it (and as the matmul
// epilogue's relu does).
// Semantics: relu(NaN) = NaN (NaN < 0 is false: it passes through); relu(-0) = -0 (not below
// zero, so it passes through; a kernel returning +0 is reported as a -0 mismatch, which never
// fails a case); relu(-Inf) = +0, relu(+Inf) = +Inf.
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_eltwise/activation_spec.hpp"

namespace opval::ops::relu {

class relu_spec final : public eltwise::activation_spec {
 public:
  std::string_view name() const override;
  std::string_view summary() const override;
  /// Exact but for flushing subnormal results: no accumulation, no rounding, no function.
  std::vector<std::string_view> contract_options() const override { return {"denorm"}; }
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
  bool exact_on_integers() const override;
};

}  // namespace opval::ops::relu
