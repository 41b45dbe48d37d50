#pragma once
// The arithmetic shared by the elementwise ops: contract-exact steps for simulate() and the
// error terms their bounds are built from. One place, so every op models rounding alike.
#include <cstdint>
#include <string>

#include "opval/contract.hpp"

namespace opval::ops::eltwise {

/// True for the types an elementwise kernel may compute in (acc, or the @math type): f64,
/// f32, f16, bf16.
inline bool is_compute_type(dtype t) {
  return t == dtype::f64 || t == dtype::f32 || t == dtype::f16 || t == dtype::bf16;
}

/// Runs f(i) for i in [0, n), on all OpenMP threads when n is large enough to share (a
/// parallel region on a busy machine waits for every thread to be scheduled).
template <class F>
void parallel_for(std::int64_t n, F&& f) {
#pragma omp parallel for schedule(static) if (n >= 16384)
  for (std::int64_t i = 0; i < n; ++i) f(i);
}

/// The steps of a kernel of the contract, each rounded to `acc` as acc_round and denorm say.
/// Elementary functions are evaluated in double and rounded once: correctly rounded in acc
/// (up to the negligible chance of a double rounding), the most accurate kernel possible.
class acc_steps {
 public:
  explicit acc_steps(const contract& c) : a_(c) {}
  /// A stored input as the kernel holds it: rounded to `math` when the contract rounds inputs,
  /// then converted to `acc`.
  double load(double x) const { return a_.acc(a_.input(x)); }
  /// One rounding of an exact result to acc.
  double round(double v) const { return a_.acc(v); }
  double add(double a, double b) const { return a_.acc(a + b); }
  double mul(double a, double b) const { return a_.acc(a * b); }
  double div(double a, double b) const { return a_.acc(a / b); }
  /// An elementary-function value computed in double, rounded to acc.
  double fn(double exact_value) const { return a_.acc(exact_value); }
  /// A constant as the kernel stores it in acc.
  double constant(double v) const { return a_.acc(v); }
  /// The final rounding to dst (ieee overflow).
  double store(double y) const { return a_.out(y); }

 private:
  contract_arith a_;
};

/// Error terms of one contract's accumulation type, first order in its unit roundoff u.
/// Every term is absolute and includes the underflow unit, so bounds stay sound near zero.
class acc_error_model {
 public:
  explicit acc_error_model(const contract& c);

  /// One rounding in acc of a result of magnitude |v|: u|v| + underflow unit.
  double rounding(double v) const;
  /// An elementary function claimed accurate to k ulps of acc, at true value v: k ulps at
  /// the value (taken at |v| + k ulps, in case the result crosses a binade) + underflow unit.
  double function(double v, double k) const;
  /// Error of the gate (1 + g)/2 when g (an erf or tanh value) is accurate to k ulps and the
  /// sum 1 + g is rounded once. The sum is charged u(1 + |g|) rather than u|1 + g| so the
  /// variant 0.5x + 0.5x*g is covered too.
  double half_one_plus_gate(double g, double k) const;
  /// Error of the gate sigma(s) = 1/(1 + exp(-s)) with exp accurate to k ulps, 1 + exp(-s)
  /// rounded once and a division or reciprocal: sigma^2 * err(exp) + sigma (u + div).
  /// When exp(-s) may overflow acc the kernel may return a zero gate (or 1/max rounding toward
  /// zero): the error is sigma + 2/max.
  double sigmoid_gate(double s, double k) const;
  /// The factor that covers second-order terms (products of two first-order errors) and the
  /// final rounding's effect on the compute error: (1 + 8u)(1 + u_dst).
  double second_order() const { return second_order_; }

  double u() const { return u_; }
  double div_relative() const { return div_rel_; }
  const function_accuracy& ulps() const { return c_.ulps; }
  const contract& spec() const { return c_; }
  /// "u=2^-24 (f32)" for formulas.
  std::string describe() const;

 private:
  contract c_;
  double u_ = 0, eps_ = 0, uf_ = 0, div_rel_ = 0, max_ = 0, second_order_ = 1;
};

}  // namespace opval::ops::eltwise
