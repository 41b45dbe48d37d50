#include "core/error_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace opval {

double gamma_deterministic(double n, double u) {
  double nu = n * u;
  return nu >= 1.0 ? std::numeric_limits<double>::infinity() : nu / (1.0 - nu);
}

double gamma_probabilistic(double n, double u, double lambda) {
  // Higham & Mary (2019), Thm 3.1: exp(lambda*sqrt(n)*u + n*u^2/(1-u)) - 1.
  return std::expm1(lambda * std::sqrt(n) * u + n * u * u / (1.0 - u));
}

double probabilistic_lambda(double events, double n, double u, double false_alarm) {
  double terms = 2.0 * std::max(events, 1.0) * std::max(n, 1.0);
  return std::sqrt(2.0 * std::log(terms / false_alarm)) / (1.0 - u);
}

double unit_roundoff(dtype t, rounding r) {
  const auto& tr = traits(t);
  if (!tr.is_float) return 0.0;
  return r == rounding::rz ? 2.0 * tr.unit_roundoff : tr.unit_roundoff;
}

double underflow_unit(dtype t, denormals d) {
  const auto& tr = traits(t);
  if (!tr.is_float) return 0.0;
  return d == denormals::ftz ? tr.min_normal : tr.min_subnormal;
}

double input_rounding_error(const contract& c, dtype stored) {
  if (!c.rounds_inputs() || !is_float(stored)) return 0.0;
  if (traits(stored).precision <= traits(c.math).precision) return 0.0;
  return unit_roundoff(c.math, c.in_round);
}

double input_error(const contract& c, dtype stored, double x) {
  const dtype held = c.rounds_inputs() ? c.math : stored;
  const bool flushed = c.denorm == denormals::ftz && is_float(held) && std::fabs(x) < traits(held).min_normal;
  return flushed ? std::fabs(x) : input_rounding_error(c, stored) * std::fabs(x);
}

double input_absolute_error(const contract& c, dtype stored) {
  if (!is_float(stored)) return 0.0;
  const dtype held = c.rounds_inputs() ? c.math : stored;
  if (c.denorm == denormals::ftz && is_float(held)) return traits(held).min_normal;
  if (!c.rounds_inputs() || traits(held).min_subnormal <= traits(stored).min_subnormal) return 0.0;
  return traits(held).min_subnormal * (c.in_round == rounding::rz ? 1.0 : 0.5);
}

double output_rounding_bound(dtype dst, rounding r, denormals d, double x) {
  const auto& tr = traits(dst);
  if (!tr.is_float) return r == rounding::rne ? 0.5 : 1.0;
  double rel = unit_roundoff(dst, r) * std::fabs(x);
  double absolute = underflow_unit(dst, d) * (r == rounding::rne ? 0.5 : 1.0);
  if (d == denormals::ftz) absolute = tr.min_normal;
  return rel + absolute;
}

rounding judged_rounding(const contract& c, const error_bound& eb) {
  return eb.directed_rounding ? rounding::rz : c.dst_round;
}

void random_sign_constants(double n, double outputs, double u, double false_alarm, double leaf_roundings,
                           accumulation_gamma& g) {
  // Any summation order of n terms is a binary tree of n - 1 additions; its error is exactly
  // sum_v delta_v x_v (x_v the sum a node rounds, |delta_v| <= u) plus the terms' own
  // roundings delta_k t_k (`leaf_roundings` per term: the product, a scale). Half the
  // false-alarm budget bounds each node's exact partial sum s_v, the sum of a value-independent
  // subset of the terms: Hoeffding on the signs given the magnitudes, |s_v| <= mu
  // sqrt(sum_{k in v} t_k^2), with a union over every node of every sum. Each term lies under
  // at most n - 1 nodes, so sum_v s_v^2 <= mu^2 (n-1) sum t^2. The other half bounds the
  // rounding martingale (Azuma, union over the sums): |error| <= lambda u sqrt(sum_v x_v^2 +
  // leaf_roundings sum t^2), where |x_v - s_v| <= gamma_det(n) sum_{k in v} |t_k|.
  const double nodes = std::max(n - 1, 1.0);
  const double mu = std::sqrt(2.0 * std::log(2.0 * std::max(outputs, 1.0) * nodes / (false_alarm / 2)));
  const double lambda = std::sqrt(2.0 * std::log(2.0 * std::max(outputs, 1.0) / (false_alarm / 2)));
  g.random_signs = true;
  g.node = mu;
  g.root = lambda * u * std::sqrt(mu * mu * nodes + leaf_roundings);
  g.linear = lambda * u * gamma_deterministic(n, u) * std::sqrt(nodes);
}

double accumulation_gamma::sum_error(double abs_sum, double square_sum) const {
  const double worst = gamma * abs_sum;
  return random_signs ? std::min(worst, root * std::sqrt(square_sum) + linear * abs_sum) : worst;
}

double accumulation_gamma::partial_sum_bound(double abs_sum, double square_sum) const {
  return random_signs ? std::min(abs_sum, node * std::sqrt(square_sum)) : abs_sum;
}

accumulation_gamma accumulation_constant(double n, double outputs, const contract& c,
                                         const fill_traits& f, const bound_options& o) {
  accumulation_gamma g;
  if (!is_float(c.acc)) {
    g.formula = "exact integer accumulation";
    return g;
  }
  const double u = unit_roundoff(c.acc, c.acc_round);
  if (n * u >= 0.5) {
    g.meaningful = false;
    g.gamma = std::numeric_limits<double>::infinity();
    g.why_not = fmt::format("n*u_acc = {}*{:.3g} = {:.3g} >= 0.5: no a-priori bound means anything",
                            n, u, n * u);
    g.formula = "none";
    return g;
  }
  const double deterministic = gamma_deterministic(n, u);
  if (f.same_sign || c.acc_round == rounding::rz) {
    g.gamma = deterministic;
    g.formula = fmt::format("gamma_det(n={}, u={:.3g}) = {:.3g}{}", n, u, g.gamma,
                            f.same_sign ? " (same-sign data)" : " (rz accumulation)");
    return g;
  }
  const double lambda = probabilistic_lambda(outputs, n, u, o.false_alarm);
  const double probabilistic = gamma_probabilistic(n, u, lambda);
  if (probabilistic >= deterministic) {
    g.gamma = deterministic;
    g.formula = fmt::format("gamma_det(n={}, u={:.3g}) = {:.3g}", n, u, g.gamma);
  } else {
    g.gamma = probabilistic;
    g.formula = fmt::format("gamma_prob(n={}, u={:.3g}, lambda={:.3g}, P_fail<={:.0e}) = {:.3g}", n,
                            u, lambda, o.false_alarm, g.gamma);
  }
  if (f.random_signs && o.random_data) random_sign_constants(n, outputs, u, o.false_alarm, 1, g);
  return g;
}

}  // namespace opval
