#pragma once
// reduce: sum, mean or max over a set of axes.
//
// Semantics a user relies on (and tests check):
// - axes= uses the dims syntax, axes separated by 'x': axes=0x2 reduces axes 0 and 2 (negative
//   axes, settable through the API, count from the end); duplicates are an error. keepdims=1
//   keeps reduced axes as extent 1; reducing every axis without keepdims gives a scalar.
// - Empty reductions (a reduced axis of extent 0): sum = 0, mean = NaN (0/0), max = -inf (the
//   identity of max; i32: the lowest value). NumPy and PyTorch agree for sum and mean; they
//   raise for max, we return the identity.
// - max: NaN wins (any NaN in the set gives NaN), and max(-0, +0) = +0 (IEEE 754-2019
//   maximum). A kernel returning -0 there is reported (neg_zero_mismatch) but does not fail.
// - Error model: sum |s_hat - s| <= gamma(n) * sum|x| for any summation order; mean adds the
//   division (or the multiplication by a rounded 1/n, or pre-scaled terms); max is exact;
//   integer (i32) sums are exact while sum|x| < 2^31.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/common_reduce/reduction_numerics.hpp"
#include "ops/common_reduce/summation.hpp"

namespace opval::ops::reduce {

enum class reduce_kind : std::uint8_t { sum, mean, max };

/// The attributes of a reduce problem, read once (axes as given: normalized_axes checks them).
struct reduce_params {
  dims shape;     ///< shape of x
  dims axes;      ///< reduced axes; negative ones count from the end
  reduce_kind kind = reduce_kind::sum;
  bool keepdims = false;
};

reduce_params params_of(const problem& p);

/// The reduced axes (normalized, sorted) and the split of the input into outer x n.
struct geometry {
  std::vector<int> order;  ///< kept axes, then reduced axes: a permutation of the input
  std::int64_t outer = 1;  ///< number of outputs
  std::int64_t n = 1;      ///< elements per output
  dims out_shape;
};

/// The reduced axes, normalized and sorted; throws opval::error for an axis outside the shape
/// or named twice.
std::vector<int> normalized_axes(const reduce_params& r);
geometry geometry_of(const reduce_params& r);

/// The input's values with every output's n elements contiguous.
std::vector<double> grouped_values(const tensor& x, const geometry& g);

// Below this many elements a parallel loop costs more (thread wake-up) than it saves.
inline constexpr std::int64_t parallel_threshold = 1 << 15;

// Internals of the reduce op that tests use to run legitimately different kernels.

/// The sim backend's kernel with a chosen summation order (forward is what simulate() uses).
void reduce_simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out, sum_order order);

/// The reduce op.
class reduce_spec final : public op_spec {
 public:
  std::string_view name() const override;
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  std::vector<std::string> fills() const override;
  std::vector<std::string> contracts() const override;

  void validate(const problem& p) const override;
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;

  /// default: N(0,1) for floats, integers in [-100, 100] for i32; `large` is as large as the
  /// sum can be without overflowing acc or dst.
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;

  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// Shapes and axes (inner, outer, middle, several, all, empty), kinds, keepdims, the fills.
  feature_table features() const override;
};

}  // namespace opval::ops::reduce
