#pragma once
// Building blocks of error models shared by every op: accumulation constants (deterministic
// and probabilistic gamma), input-rounding terms and elementary-function terms.
#include <cstdint>
#include <string>

#include "opval/contract.hpp"
#include "opval/op_spec.hpp"

namespace opval {

/// The deterministic constant gamma_n = n*u / (1 - n*u) (Higham, Thm 3.1); +inf if n*u >= 1.
double gamma_deterministic(double n, double u);
/// The probabilistic constant lambda*sqrt(n)*u (Higham & Mary 2019, first order).
double gamma_probabilistic(double n, double u, double lambda);
/// lambda such that a union bound over `events` rounding-error sums of length n fails with
/// probability <= false_alarm: 2*events*n*exp(-lambda^2 (1-u)^2 / 2) <= false_alarm.
double probabilistic_lambda(double events, double n, double u, double false_alarm);

/// The accumulation constant of an n-term sum in the contract's accumulation type, chosen
/// as the rules say: probabilistic for round-to-nearest accumulation of data that
/// may cancel, deterministic for same-sign data or round-toward-zero accumulation.
struct accumulation_gamma {
  double gamma = 0;        ///< multiplies the sum of |terms|
  bool meaningful = true;  ///< false when n*u_acc >= 0.5
  std::string formula;     ///< e.g. "gamma_prob(n=33, u=2^-24, lambda=8.3)"
  std::string why_not;
  /// Random-sign terms (fill_traits::random_signs, bound_options::random_data): the error is
  /// also at most root*sqrt(sum t^2) + linear*sum|t| (random_sign_constants).
  bool random_signs = false;
  double root = 0, linear = 0;
  /// Random-sign terms: every exact partial sum the summation tree forms (a node) is at most
  /// node * sqrt(sum t^2) in magnitude, on the same event as root and linear.
  double node = 0;

  /// The bound on the accumulation error of one sum with sum|t| = abs_sum and sum t^2 =
  /// square_sum (the latter read only for random-sign terms).
  double sum_error(double abs_sum, double square_sum) const;
  /// A bound on the largest exact partial sum of the sum's tree: sum|t| = abs_sum, or for
  /// random-sign terms also node * sqrt(sum t^2).
  double partial_sum_bound(double abs_sum, double square_sum) const;
};
/// `n` terms per sum, `outputs` sums in the case, `u` the unit roundoff of accumulation.
accumulation_gamma accumulation_constant(double n, double outputs, const contract& c,
                                         const fill_traits& f, const bound_options& o);

/// The sharper bound's constants for an n-term sum, one of `outputs` sums, accumulated with
/// unit roundoff u in an order that does not depend on the values, of terms whose signs are
/// independent fair coins given their magnitudes, each term rounded `leaf_roundings` times
/// before it is added (a product: 1): with probability >= 1 - false_alarm every sum's error
/// is at most root*sqrt(sum t^2) + linear*sum|t| (derivation: docs/NUMERICS.md, "Random-sign
/// data"). Sets g's random_signs, root and linear.
void random_sign_constants(double n, double outputs, double u, double false_alarm, double leaf_roundings,
                           accumulation_gamma& g);

/// Relative error of rounding an input to the contract's `math` type inside the kernel
/// (0 when the kernel receives inputs already in that type).
double input_rounding_error(const contract& c, dtype stored);
/// The absolute error of one stored input x as the kernel holds it: the relative input rounding
/// (input_rounding_error) and, under denorm=ftz, the whole of a subnormal x flushed to zero.
double input_error(const contract& c, dtype stored, double x);
/// The absolute part of that error, which no relative term covers: a value below the held
/// type's normal range rounded to its coarser subnormals (f32 to tf32 or bf16: half their
/// spacing, all of it for in_round=rz) or, under denorm=ftz, flushed (less than its smallest
/// normal); 0 where the contract keeps a stored value's subnormals.
double input_absolute_error(const contract& c, dtype stored);
/// The unit roundoff of a type under a rounding mode (u for rne, 2u for rz); 0 for f64-exact.
double unit_roundoff(dtype t, rounding r);
/// The smallest positive spacing of `t` (its absolute underflow error unit).
double underflow_unit(dtype t, denormals d);

}  // namespace opval

namespace opval {
/// Bound on |round(x) - x| for the final rounding of a value x to `dst` (u|x| + half the
/// subnormal spacing for rne; 2u|x| + the spacing for rz; +min_normal under ftz; for
/// integers 0.5 (rne) or 1 (rz)). Overflow to infinity is judged separately.
double output_rounding_bound(dtype dst, rounding r, denormals d, double x);
/// The rounding an output is judged with: the contract's dst_round, or rz's whole ulp where the
/// op rounds that output in one direction (error_bound::directed_rounding).
rounding judged_rounding(const contract& c, const error_bound& eb);
}  // namespace opval
