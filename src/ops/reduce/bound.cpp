// reduce: the error model. sum: gamma(n) sum|x| for any summation order (forward, reversed,
// pairwise, split), for random-sign fills also the sharper root*sqrt(sum x^2) + linear*sum|x|; mean: that over n plus the division (S/n, S*fl(1/n) or pre-scaled
// terms); max: exact; i32 sums: exact while sum|x| < 2^31 (else no meaningful bound).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "core/error_model.hpp"
#include "ops/reduce/reduce.hpp"

namespace opval::ops::reduce {

std::vector<error_bound> reduce_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                            std::span<const tensor> in, std::span<const tensor> ref) const {
  const reduce_params r = params_of(p);
  const geometry g = geometry_of(r);
  const reduce_kind kind = r.kind;
  error_bound b;
  b.compute = tensor(dtype::f64, g.out_shape);
  double* out = b.compute.data_as<double>();
  std::fill(out, out + g.outer, 0.0);
  if (kind == reduce_kind::max) {
    b.formula = "max is exact: 0";
    return {b};
  }
  const std::vector<double> x = grouped_values(in[0], g);
  // Per output, sum|x| and (for the random-sign bound) sum x^2.
  std::vector<double> abs_sums(static_cast<std::size_t>(g.outer)), square_sums(abs_sums.size());
#pragma omp parallel for schedule(static) if (g.outer * g.n >= parallel_threshold)
  for (std::int64_t k = 0; k < g.outer; ++k) {
    double s = 0, q = 0;
    for (std::int64_t i = 0; i < g.n; ++i) {
      const double v = x[static_cast<std::size_t>(k * g.n + i)];
      s += std::fabs(v);
      q += v * v;
    }
    abs_sums[static_cast<std::size_t>(k)] = s;
    square_sums[static_cast<std::size_t>(k)] = q;
  }
  if (!is_float(p.dt.src)) {
    const double worst = abs_sums.empty() ? 0 : *std::max_element(abs_sums.begin(), abs_sums.end());
    b.formula = "i32 sums are exact while sum|x| < 2^31: 0";
    if (worst >= 0x1.0p31) {
      b.meaningful = false;
      b.why_not = fmt::format("sum|x| = {} may overflow i32 partial sums", worst);
    }
    return {b};
  }
  if (g.n == 0) {
    b.formula = "empty reduction: exact (sum 0, mean NaN)";
    return {b};
  }
  const accumulation_gamma ag =
      accumulation_constant(static_cast<double>(g.n), static_cast<double>(g.outer), p.dt, f, o);
  b.meaningful = ag.meaningful;
  b.why_not = ag.why_not;
  const double u = unit_roundoff(p.dt.acc, p.dt.acc_round);
  const double g2 = gamma_deterministic(2, u);
  const double* y = ref[0].data_as<double>();
  const double dn = static_cast<double>(g.n);
  for (std::int64_t k = 0; k < g.outer; ++k) {
    const double s = abs_sums[static_cast<std::size_t>(k)];
    if (!std::isfinite(s)) continue;  // NaN/Inf results are compared by class, not by bound
    const double sum_error = ag.sum_error(s, square_sums[static_cast<std::size_t>(k)]);
    out[k] = kind == reduce_kind::sum ? sum_error : mean_error(sum_error, s, dn, y[k], g2);
  }
  const std::string sum_bound =
      ag.random_signs ? fmt::format("min(gamma*sum|x|, {:.3g}*sqrt(sum x^2) + {:.3g}*sum|x|) (random signs)", ag.root,
                                    ag.linear)
                      : "gamma*sum|x|";
  b.formula = kind == reduce_kind::sum
      ? fmt::format("{}, gamma={} ({})", sum_bound, ag.gamma, ag.formula)
      : fmt::format("{}/n*(1+g2) + g2*(mean|x|+|y|), gamma={} ({}), g2={:.3g}", sum_bound, ag.gamma, ag.formula, g2);
  return {b};
}

}  // namespace opval::ops::reduce
