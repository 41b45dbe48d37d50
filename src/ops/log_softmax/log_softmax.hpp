#pragma once
// log_softmax over one axis of an arbitrary shape: y_j = (x_j - max) - log(sum_k exp(x_k - max))
// along `axis`, independently for every other index (in that order: x - (max + log s) loses
// u|max|). A NaN or +inf in a row makes the whole row NaN; a -inf entry gets log-probability
// -inf; an all -inf row is NaN. The spec and numerics are softmax's
// (common_softmax/softmax_family.hpp, common_softmax/softmax_numerics.hpp).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/common_softmax/softmax_family.hpp"

namespace opval::ops::log_softmax {

/// The attributes of a log_softmax problem (shape, axis): the family's, read by
/// softmax::params_of.
using log_softmax_params = softmax::softmax_family_params;

/// log_softmax over one axis of an arbitrary shape.
class log_softmax_spec final : public softmax::softmax_family_spec {
 public:
  log_softmax_spec() : softmax_family_spec(true) {}

  std::string_view name() const override;
  std::string_view summary() const override;
  std::vector<std::string_view> contract_options() const override {
    return {"acc_round", "denorm", "dst_round", "ulp:exp", "ulp:log"};
  }
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<posterior_check> posterior(const problem& p, const fill_traits& f, const bound_options& o,
                                         std::span<const tensor> in, std::span<const tensor> ref,
                                         std::span<const tensor> out) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
};

}  // namespace opval::ops::log_softmax
