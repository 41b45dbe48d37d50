#pragma once
// Mean pooling, shared by avg_pool2d and global_avg_pool: y = (sum of the window's taps inside
// the input) / divisor, the divisor being the taps inside the input or, with
// count_include_pad, those inside the padded input (PyTorch's rule: taps a ceil_mode window
// reaches past the trailing padding are never counted).
//
// Error model: the sum of n <= kh*kw terms in acc, gamma(n)*sum|x| for any order, over the
// divisor, plus the division (S/d, S*fl(1/d), or every term scaled by fl(1/d) first):
// reduce's mean error (common_reduce/reduction_numerics.hpp), then the rounding to dst.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ops/common_pool/pool_window.hpp"
#include "ops/common_reduce/summation.hpp"

namespace opval::ops::pool {

/// What a window's sum is divided by.
enum class divisor_rule : std::uint8_t {
  inside,  ///< the taps inside the input (count_include_pad=0)
  padded,  ///< the taps inside the padded input (count_include_pad=1)
};

/// A mean-pooling kernel's algorithm: the summation order, and whether it scales each term by
/// fl(1/d) before summing instead of dividing the sum. Every choice is legitimate.
struct mean_kernel {
  reduce::sum_order order = reduce::sum_order::forward;
  bool prescaled = false;
};

/// The mean pooling ops: float contracts, the generic fills, reference, emulation and bound.
class mean_pool_spec : public pool_spec {
 public:
  virtual divisor_rule divisor_of(const problem& p) const = 0;

  std::vector<std::string> contracts() const override;
  void validate(const problem& p) const override;
  /// default: N(0,1); `large` is as large as a window's sum can be without overflowing acc.
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;

 protected:
  void mean_reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const;
  std::vector<error_bound> mean_bound(const problem& p, const fill_traits& f, const bound_options& o,
                                      std::span<const tensor> in, std::span<const tensor> ref) const;
};

/// The sim kernel of any mean-pooling problem with the algorithm `k` (simulate() is forward,
/// dividing the sum).
void mean_pool_simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out, const mean_kernel& k);

}  // namespace opval::ops::pool
