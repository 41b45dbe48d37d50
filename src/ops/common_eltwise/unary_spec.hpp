#pragma once
// The shared part of unary elementwise ops (activations and cast): a `shape` attribute plus
// the layout attributes, one input `x` stored as the contract's src, one contiguous output
// `y` of the same shape stored as dst.
#include <cstdint>
#include <span>
#include <vector>

#include "ops/common_eltwise/eltwise_layout.hpp"
#include "ops/common_eltwise/eltwise_math.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::eltwise {

/// Base of unary elementwise ops; subclasses add the math.
class unary_spec : public op_spec {
 public:
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;

 protected:
  /// `shape` and the layout attributes followed by the op's own attributes.
  template <class... Own>
  static attr_schema make_schema(Own... own) {
    return attr_schema{shape_attr(), stride_pad_attr(), step_attr(), std::move(own)...};
  }
  static attr_def shape_attr();
  /// Checks the shape and that the contract names one input type.
  void validate_operands(const problem& p) const;
  /// Arithmetic per element (elementary functions count one each), for throughput figures.
  virtual double flops_per_element(const problem& p) const = 0;
};

/// Writes f(x_i) for every logical element of x into y (y's shape, any layout). f returns a
/// value already representable in y's type, so the store does not round again.
template <class F>
void map_elements(const tensor& x, tensor& y, F&& f) {
  const std::vector<double> xs = x.to_vector();
  const auto n = static_cast<std::int64_t>(xs.size());
  // Typed stores where the layout allows: the generic path decodes an index per element.
  if (y.is_contiguous() && y.type() == dtype::f64) {
    double* o = y.data_as<double>();
    parallel_for(n, [&](std::int64_t i) { o[i] = f(xs[i]); });
  } else if (y.is_contiguous() && y.type() == dtype::f32) {
    float* o = y.data_as<float>();
    parallel_for(n, [&](std::int64_t i) { o[i] = static_cast<float>(f(xs[i])); });
  } else {
    parallel_for(n, [&](std::int64_t i) { y.set_at(i, f(xs[i])); });
  }
}

/// Writes an f64 tensor of the reference's shape with f(x_i, ref_i).
template <class F>
tensor map_bound(const tensor& x, const tensor& ref, F&& f) {
  const std::vector<double> xs = x.to_vector();
  tensor b(dtype::f64, ref.shape());
  const double* r = ref.data_as<double>();
  double* o = b.data_as<double>();
  parallel_for(static_cast<std::int64_t>(xs.size()), [&](std::int64_t i) { o[i] = f(xs[i], r[i]); });
  return b;
}

}  // namespace opval::ops::eltwise
