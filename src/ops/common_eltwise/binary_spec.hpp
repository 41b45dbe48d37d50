#pragma once
// Binary elementwise ops y = a (op) b with numpy broadcasting (add, mul): everything but the
// operation. a is stored as the contract's src, b as wei (`bf16xf32:f32:f32` adds an f32 bias
// to bf16 activations); both take the layout attributes; y is contiguous in the broadcast shape.
//
// Error model: the kernel converts a and b to acc (exact for the supported contracts unless
// the contract rounds inputs) and rounds a (op) b once in acc:
//   |y_kernel - y| <= |a_acc (op) b_acc - a (op) b| + u|a_acc (op) b_acc| + underflow unit.
// IEEE semantics for specials: Inf - Inf = NaN, 0 * Inf = NaN, NaN propagates.
//
// Integer contracts (i32:i32:i32, i64:i64:i64): the result wraps modulo 2^bits (two's
// complement), as C/C++ unsigned arithmetic, PyTorch and NumPy give it; it is exact and judged
// exactly (bound 0). i32's `large` fill spans the whole type, so sums and products wrap; i64's
// fills keep |result| < 2^53 (opval's reference holds values as doubles), so i64 wrapping is
// specified but not exercised.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/common_eltwise/broadcast.hpp"
#include "ops/common_eltwise/eltwise_layout.hpp"
#include "ops/common_eltwise/eltwise_math.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::eltwise {

/// Base of the broadcasting binary ops.
class binary_spec : public op_spec {
 public:
  const attr_schema& schema() const override;
  /// f32, bf16:f32:bf16, f16:f32:f16, f16:f16:f16, bf16xf32:f32:f32 (mixed operands), and
  /// the integer i32:i32:i32 and i64:i64:i64.
  std::vector<std::string> contracts() const override;
  void validate(const problem& p) const override;
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// The broadcasting patterns and layouts, the generic fills and the contract options.
  feature_table features() const override;

 protected:
  /// a (op) b in double.
  virtual double apply(double a, double b) const = 0;
  /// Whether the op takes the integer contracts (add, mul; not div).
  virtual bool wraps_integers() const { return false; }
  /// a (op) b modulo 2^64 (two's complement): the integer contracts' operation.
  virtual std::int64_t apply_wrapped(std::int64_t, std::int64_t) const { return 0; }
  /// The largest input magnitude of the `large` and `wide` fills: no overflow of acc or dst.
  virtual double large_scale(const problem& p) const = 0;
  /// "a + b" for formulas.
  virtual std::string_view symbol() const = 0;

 private:
  /// Calls f(i, a_i, b_i) for every output element i.
  template <class F>
  void for_each_pair(const problem& p, std::span<const tensor> in, F&& f) const;
  /// The exact integer result of a (op) b wrapped to the contract's output type.
  double integer_result(const problem& p, double a, double b) const;
  /// The integer contracts' fills: uniform integers, the range by fill name.
  void fill_integers(const problem& p, std::uint64_t seed, std::span<tensor> in) const;
};

}  // namespace opval::ops::eltwise
