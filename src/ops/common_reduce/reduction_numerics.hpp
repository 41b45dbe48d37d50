#pragma once
// What reduce and the pooling ops share beyond the summation order: max with the semantics
// both promise, and the error of a mean.
#include <cmath>
#include <limits>

namespace opval::ops::reduce {

/// max with the semantics reduce and max pooling promise: NaN wins; +0 is larger than -0 (as
/// IEEE 754-2019 maximum); the identity (empty reduction) is -inf.
inline double max_of(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;  // only differs for -0 vs +0: +0 wins
  return a > b ? a : b;
}

/// The error of a mean S/d computed in acc, before the rounding to dst: the sum's error
/// bound sum_error (accumulation_gamma::sum_error of its terms) over d, the division (S/d,
/// S*fl(1/d) or terms scaled by fl(1/d) before the sum, whose sum error then scales with them:
/// g2 = gamma_det(2, u_acc)) and its result y. abs_sum = sum |x| of the summed terms.
inline double mean_error(double sum_error, double abs_sum, double divisor, double y, double g2) {
  const double m = abs_sum / divisor;
  return sum_error / divisor * (1 + g2) + g2 * (m + std::fabs(y));
}

}  // namespace opval::ops::reduce
