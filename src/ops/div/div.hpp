#pragma once
// div: y = a / b with numpy broadcasting; one rounding in acc (see binary_spec.hpp), IEEE
// division: x/0 = +-Inf for x != 0, 0/0 = NaN, x/Inf = +-0.
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_eltwise/binary_spec.hpp"

namespace opval::ops::div {

class div_spec final : public eltwise::binary_spec {
 public:
  std::string_view name() const override;
  std::string_view summary() const override;
  std::vector<std::string> suite(std::string_view tag) const override;

 protected:
  double apply(double a, double b) const override;
  double large_scale(const problem& p) const override;
  std::string_view symbol() const override;
};

}  // namespace opval::ops::div
