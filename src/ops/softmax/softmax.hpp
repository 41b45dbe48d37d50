#pragma once
// softmax over one axis of an arbitrary shape: y_j = exp(x_j - max) / sum_k exp(x_k - max)
// along `axis`, independently for every other index. A NaN or +inf in a row makes the whole
// row NaN; a -inf entry gets probability exactly 0; an all -inf row is NaN (0/0, as PyTorch
// and ONNX). The spec is shared with log_softmax (common_softmax/softmax_family.hpp), the
// numerics of a row with log_softmax and attention (common_softmax/softmax_numerics.hpp).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/common_softmax/softmax_family.hpp"

namespace opval::ops::softmax {

/// The attributes of a softmax problem (shape, axis): the family's, read by params_of.
using softmax_params = softmax_family_params;

/// softmax over one axis of an arbitrary shape.
class softmax_spec final : public softmax_family_spec {
 public:
  softmax_spec() : softmax_family_spec(false) {}

  std::string_view name() const override;
  std::string_view summary() const override;
  std::vector<std::string_view> contract_options() const override {
    return {"acc_round", "denorm", "dst_round", "ulp:exp", "ulp:div"};
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

}  // namespace opval::ops::softmax
