#pragma once
// add: y = a + b with numpy broadcasting; one rounding in acc (see binary_spec.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_eltwise/binary_spec.hpp"

namespace opval::ops::add {

class add_spec final : public eltwise::binary_spec {
 public:
  std::string_view name() const override;
  std::string_view summary() const override;
  std::vector<std::string> suite(std::string_view tag) const override;

 protected:
  double apply(double a, double b) const override;
  bool wraps_integers() const override { return true; }
  std::int64_t apply_wrapped(std::int64_t a, std::int64_t b) const override;
  double large_scale(const problem& p) const override;
  std::string_view symbol() const override;
};

}  // namespace opval::ops::add
