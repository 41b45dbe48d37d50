#pragma once
// The numerics of one softmax row, shared by softmax, log_softmax and attention: special-value
// semantics, the fp64 reference, the contract-exact emulation and the error model.
// Header-only so that each op folder builds on its own (OPVAL_OPS may name any subset).
//
// Error model of one row x_1..x_n (n terms, u = unit roundoff of acc, eps = 2u the ulp factor,
// p_j the exact softmax of the stored x, m = max_j x_j). A kernel computes
//   t_j = fl(x_j - m), e_j = exp~(t_j), s = sum~ e_j, p_j = e_j / s   (or y_j = t_j - log~(s)).
// Every source of error is a perturbation either of one logit or of a common factor:
//   delta_j = dx_j + u (m - x_j)          logit perturbation: errors incurred before the softmax
//                                         (dx: input rounding, attention's S = Q.K^T) plus the
//                                         rounding of x_j - m. Online softmax subtracts running
//                                         maxima and rescales by exp(m_old - m_new); the
//                                         rounding errors of those arguments telescope to the
//                                         same u (m - x_j).
//   A perturbation delta of the logits changes p_j by the factor exp(delta_j) / sum_k p_k
//   exp(delta_k), so |log(p^_j / p_j)| <= |delta_j| + e^{max delta} sum_k p_k |delta_k|.
//   exp_rel  = ulps.exp * eps             one exp, in the numerator (individual) and, averaged,
//                                         in the denominator (common)
//   resc_rel = R (2 ulps.exp + 1) u        online softmax: R = ceil(n/16) - 1 rescalings by a
//                                         computed exp and a product (kernels that rescale at
//                                         most once per 16 keys; FlashAttention uses 64-128)
//   sum_rel  = gamma_det(n)                the denominator: n same-sign terms (deterministic)
//   div_rel  = max(ulps.div eps, u) + u    the division (+u: multiplying by a rounded
//                                         reciprocal is allowed); the last rounding is dropped
//                                         when it is the output rounding (acc = dst), which
//                                         the runner adds.
// With l(e) = e / (1 - e) (|log(1+e)| <= l(e)):
//   L_ind_j = delta_j + l(exp_rel) + l(resc_rel)
//   L_com   = e^{max delta} sum_k p_k delta_k + l(exp_rel) + l(resc_rel) + l(sum_rel) + l(div_rel)
//   |p^_j - p_j| <= p_j expm1(L_ind_j + L_com) + abs_j,
//   abs_j = 2 uf_acc (ulps.exp (1 + n p_j) + 1)   (exp and division underflow, s >= 1)
// log_softmax, y_j = t_j - log~(s):
//   |y^_j - y_j| <= delta_j + L_s + ulps.log eps (log s + L_s) + uf_acc [+ u |y_j| when the
//   subtraction is not the output rounding], L_s = L_com without div_rel + l(n ulps.exp uf_acc)
//   the error of log(s). (x_j - (m + log s)) loses u |m| and is rejected: PyTorch keeps the
//   order x - m - log s for that reason, pytorch#11752.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "opval/contract.hpp"
#include "core/error_model.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::softmax {

/// What a row of logits is under opval's special-value semantics:
/// a NaN or +inf anywhere makes every output NaN (+inf - +inf is undefined); a row whose
/// entries are all -inf has no probability mass (`empty`); otherwise the row is `finite`
/// and its -inf entries get probability exactly 0 (log-probability -inf).
enum class row_kind { finite, nan, empty };

/// What an `empty` row yields: NaN (softmax/log_softmax, as 0/0 in PyTorch and ONNX) or zero
/// output (attention's fully masked rows, as FlashAttention).
enum class empty_row { nan, zero };

/// The kind of a row and its maximum (meaningful for `finite` rows).
struct row_class {
  row_kind kind = row_kind::finite;
  double max = -std::numeric_limits<double>::infinity();
};

/// Classifies a row; std::max would silently drop NaNs, so they are checked explicitly.
inline row_class classify_row(std::span<const double> x) {
  row_class c;
  for (double v : x) {
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) {
      c.kind = row_kind::nan;
      return c;
    }
    c.max = std::max(c.max, v);
  }
  if (c.max == -std::numeric_limits<double>::infinity()) c.kind = row_kind::empty;
  return c;
}

/// Writes the outputs of a non-finite row; returns false for a finite row (nothing written).
inline bool special_row(const row_class& c, empty_row policy, bool log, std::span<double> out) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (c.kind == row_kind::finite) return false;
  double v = nan;
  if (c.kind == row_kind::empty && policy == empty_row::zero) v = log ? -std::numeric_limits<double>::infinity() : 0.0;
  std::fill(out.begin(), out.end(), v);
  return true;
}

/// fp64 softmax (or log_softmax) of one row, with the semantics of classify_row.
inline void reference_row(std::span<const double> x, std::span<double> out, bool log, empty_row policy) {
  const row_class c = classify_row(x);
  if (special_row(c, policy, log, out)) return;
  double s = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    out[j] = std::exp(x[j] - c.max);  // -inf entries give exactly 0
    s += out[j];
  }
  const double log_s = std::log(s);
  for (std::size_t j = 0; j < x.size(); ++j) out[j] = log ? (x[j] - c.max) - log_s : out[j] / s;
}

/// Contract-exact softmax of one row (x already in the kernel's input precision): t = x - m,
/// exp, sequential sum and division (or t - log(s)) each rounded to acc. The result is left
/// in acc; the caller rounds it to dst (or to mid for attention).
inline void simulate_row(std::span<const double> x, std::span<double> out, bool log, empty_row policy,
                         const contract_arith& a) {
  const row_class c = classify_row(x);
  if (special_row(c, policy, log, out)) return;
  double s = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double t = a.acc(x[j] - c.max);
    const double e = a.acc(std::exp(t));
    s = a.acc(s + e);
    out[j] = log ? t : e;
  }
  if (log) {
    const double log_s = a.acc(std::log(s));
    for (auto& t : out) t = a.acc(t - log_s);
  } else {
    for (auto& e : out) e = a.acc(e / s);
  }
}

/// The row-independent constants of the error model (see the top of this file).
struct error_constants {
  double u = 0;          ///< unit roundoff of acc (under acc_round)
  double exp_rel = 0;    ///< one exp
  double log_rel = 0;    ///< one log, relative to |log s|
  double resc_rel = 0;   ///< all online-softmax rescalings together
  double rescalings = 0; ///< R, the most online-softmax rescalings of one row
  double sum_rel = 0;    ///< the denominator sum
  double div_rel = 0;    ///< the division
  double uf = 0;         ///< underflow unit of acc
  double exp_ulps = 0;
  double n = 0;
  bool meaningful = true;
  std::string why_not;
  std::string formula;
};

/// Constants for rows of `n` terms, `rows` rows in the case. `output_is_final`: the division
/// (softmax) or subtraction (log_softmax) result is the op's output and its last rounding is
/// the output rounding the runner adds (acc == dst, same rounding mode).
inline error_constants make_error_constants(double n, double rows, const contract& c, const bound_options& o,
                                            bool output_is_final) {
  error_constants k;
  const auto& tr = traits(c.acc);
  k.u = unit_roundoff(c.acc, c.acc_round);
  k.exp_ulps = c.ulps.exp;
  k.exp_rel = c.ulps.exp * tr.epsilon;
  k.log_rel = c.ulps.log * tr.epsilon;
  k.rescalings = std::max(0.0, std::ceil(n / 16.0) - 1.0);
  k.resc_rel = k.rescalings * (2.0 * c.ulps.exp + 1.0) * k.u;
  fill_traits same_sign;
  same_sign.same_sign = true;  // exp(x - m) > 0: the denominator never cancels
  const accumulation_gamma g = accumulation_constant(n, rows, c, same_sign, o);
  k.sum_rel = g.gamma;
  k.meaningful = g.meaningful;
  k.why_not = g.why_not;
  k.div_rel = std::max(c.ulps.div * tr.epsilon, k.u) + k.u - (output_is_final ? k.u : 0.0);
  k.uf = underflow_unit(c.acc, c.denorm);
  k.n = n;
  k.formula = fmt::format(
      "softmax(n={}): p*expm1(delta_j + e^dmax*sum p*delta + 2*exp {:.3g} + rescale {:.3g} + sum {} + div {:.3g}),"
      " delta_j = dx_j + u*(max-x_j), u={:.3g}",
      n, k.exp_rel, k.resc_rel, g.formula, k.div_rel, k.u);
  return k;
}

/// The bound of one finite row: per element a logit perturbation, a per-term and a common
/// log-error, and an absolute underflow term (see the top of this file).
struct row_bound {
  std::vector<double> delta;  ///< delta_j (0 for -inf entries)
  double own = 0;             ///< l(exp_rel) + l(resc_rel): the per-term exp and rescaling errors
  double log_com = 0;         ///< L_com (division included)
  double log_sum = 0;         ///< L_s: the error of log(s) (no division)
  std::vector<double> abs;    ///< abs_j
  double log_s = 0;           ///< log(s) of the exact row, s = sum exp(x - max)
  double log_ind(std::size_t j) const { return delta[j] + own; }  ///< L_ind_j
};

inline double log_factor(double e) { return e >= 1.0 ? std::numeric_limits<double>::infinity() : e / (1.0 - e); }

/// Bound of a finite row x with exact probabilities p; dx are absolute logit errors incurred
/// before the softmax (empty = none). -inf entries contribute nothing.
inline row_bound bound_row(std::span<const double> x, std::span<const double> p, std::span<const double> dx,
                           const error_constants& k) {
  const std::size_t n = x.size();
  row_bound b;
  b.delta.assign(n, 0.0);
  b.abs.assign(n, 0.0);
  const double m = classify_row(x).max;
  double avg = 0, dmax = 0, s = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (std::isinf(x[j])) continue;
    b.delta[j] = (dx.empty() ? 0.0 : dx[j]) + k.u * (m - x[j]);
    avg += p[j] * b.delta[j];
    dmax = std::max(dmax, b.delta[j]);
    s += std::exp(x[j] - m);
    b.abs[j] = 2.0 * k.uf * (k.exp_ulps * (1.0 + k.n * p[j]) + 1.0);
  }
  b.own = log_factor(k.exp_rel) + log_factor(k.resc_rel);
  const double shared = std::exp(dmax) * avg + b.own + log_factor(k.sum_rel);
  b.log_sum = shared + log_factor(k.n * k.exp_ulps * k.uf);
  b.log_com = shared + log_factor(k.div_rel);
  b.log_s = std::log(s);
  return b;
}

/// |p^_j - p_j| of a softmax output element (0 for -inf entries: exactly 0 is required).
inline double probability_error(const row_bound& b, std::size_t j, double p) {
  return p * std::expm1(b.log_ind(j) + b.log_com) + b.abs[j];
}

/// |y^_j - y_j| of a log_softmax output element; `u_final` is u_acc when the last
/// subtraction is not the output rounding, else 0. t_j = x_j - m enters y_j directly, so only
/// delta_j (not the exp error) is individual.
inline double log_probability_error(const row_bound& b, std::size_t j, double y, const error_constants& k,
                                    double u_final) {
  if (std::isinf(y)) return 0.0;
  const double log_eval = k.log_rel * (b.log_s + b.log_sum) + k.uf;
  return b.delta[j] + b.log_sum + log_eval + u_final * std::fabs(y);
}

// ---------------------------------------------------------------- the row-shape test
// A posteriori (docs/NUMERICS.md, "The row-shape test"). The kernel's row is normalized by
// its own sum, p~_j = p^_j / r^ with r^ = sum_k p^_k (softmax), or shifted by its own
// log-sum-exp, y~_j = y^_j - log sum_k exp(y^_k) (log_softmax), both in fp64. Every error a
// correct kernel shares across the row (the denominator sum, its reciprocal, log s, the sum's
// online rescalings) is a common factor (offset), which that cancels exactly. What is left are
// the per-term log errors theta_j, |theta_j| <= T_j:
//   softmax      T_j = dx_j + u (2 (m - x_j) + log s + 1)   the logit, also for a kernel that
//                                                      computes exp(x - m - log s)
//                      + l(exp_rel) + l(exp_rel + u)   its exp, and one rescaling of the term by
//                                                      a computed exp (one-pass kernels)
//                      + l(max(ulps.div eps, u))       the division (the product by a common
//                                                      reciprocal: its rounding is common)
//                      [+ l(u_dst) when dst is not acc]
//   log_softmax  T_j = dx_j + u (m - x_j) + the same exp, rescaling and division terms (a
//                      kernel may compute log(softmax))
//                      + (u [if acc != dst] + u_dst + log_ulps eps) |y^_j| (1 + 2u) + abs units
// With p~_j = p_j e^{theta_j} / sum_k p_k e^{theta_k}:
//   |log(p~_j / p_j)| <= T_j + C,  C = log sum_k p_k e^{T_k}  (>= sum_k p_k T_k, Jensen),
// so |p~_j - p_j| <= p_j expm1(T_j + C) + (A_j + q_j sum_k A_k) / r^, q_j = p_j e^{T_j + C},
// A_j the absolute underflow and output-rounding errors; |y~_j - y_j| <= T_j + C. No n u.
// Both sides are normalized the same way (the reference too, so its own sum's error cancels),
// with compensated fp64 sums; `fp64_slack` covers what fp64 normalization adds.

/// Neumaier's compensated sum: a few fp64 ulps of the result whatever n (terms of one sign).
inline double compensated_sum(std::span<const double> v) {
  double s = 0, c = 0;
  for (double x : v) {
    const double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  return s + c;
}

/// log sum_k exp(y_k) in fp64, max-shifted; -inf when every y_k is -inf.
inline double log_sum_exp(std::span<const double> y) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : y) m = std::max(m, v);
  if (m == -std::numeric_limits<double>::infinity()) return m;
  std::vector<double> e(y.size());
  for (std::size_t k = 0; k < y.size(); ++k) e[k] = std::exp(y[k] - m);
  return m + std::log(compensated_sum(e));
}

/// A row normalized the row-shape test's way: divided by its sum (softmax) or shifted by its
/// log-sum-exp (log_softmax). Returns the sum (softmax) or exp(offset) (log_softmax); 0 when
/// the row has no finite positive sum or a non-finite element (the element-wise test judges
/// such a row, and `out` is left unwritten).
inline double normalize_row(std::span<const double> y, bool log, std::span<double> out) {
  for (double v : y)
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity() || (!log && std::isinf(v))) return 0.0;
  if (log) {
    const double c = log_sum_exp(y);
    if (!std::isfinite(c)) return 0.0;
    for (std::size_t j = 0; j < y.size(); ++j) out[j] = y[j] - c;
    return std::exp(c);
  }
  const double r = compensated_sum(y);
  if (!(r > 0) || !std::isfinite(r)) return 0.0;
  for (std::size_t j = 0; j < y.size(); ++j) out[j] = y[j] / r;
  return r;
}

/// The constants of the row-shape test (see above).
struct shape_constants {
  double u = 0;          ///< unit roundoff of acc
  double own = 0;        ///< exp, one rescaling, the division (and the output rounding when dst != acc)
  double log_rel = 0;    ///< log_softmax: relative to |y^|: the subtraction's, the output's and a log's rounding
  double abs = 0;        ///< absolute per element: underflow in acc and the output's subnormal spacing
  double fp64_slack = 0; ///< the fp64 normalization's own error, relative (log: + per unit of |y|)
  std::string formula;
};

/// The row-shape constants of a contract; `output_is_final` as for make_error_constants.
inline shape_constants make_shape_constants(double n, const contract& c, bool log, bool output_is_final) {
  shape_constants k;
  const auto& tr = traits(c.acc);
  k.u = unit_roundoff(c.acc, c.acc_round);
  const double exp_rel = c.ulps.exp * tr.epsilon;
  const double u_dst = output_is_final ? 0.0 : unit_roundoff(c.dst, c.dst_round);
  const double div = std::max(c.ulps.div * tr.epsilon, k.u);
  k.own = log_factor(exp_rel) + log_factor(exp_rel + k.u) + log_factor(div) + (log ? 0.0 : log_factor(u_dst));
  if (log) k.log_rel = ((output_is_final ? 0.0 : k.u) + u_dst + c.ulps.log * tr.epsilon) * (1.0 + 2.0 * k.u);
  const double uf = underflow_unit(c.acc, c.denorm);
  k.abs = 2.0 * uf * (c.ulps.exp + 1.0) + output_rounding_bound(c.dst, c.dst_round, c.denorm, 0.0);
  const double u64 = std::numeric_limits<double>::epsilon() / 2;
  k.fp64_slack = 16.0 * u64 + 4.0 * n * u64 * u64;
  k.formula = log ? fmt::format("row shape (each row shifted by its own log-sum-exp): |y~ - y| <= T_j + log sum p e^T, "
                                "T_j = dx_j + u*(max-x_j) + {:.3g} + {:.3g}*|y^_j|, u={:.3g}",
                                k.own, k.log_rel, k.u)
                  : fmt::format("row shape (each row divided by its own sum): |p~ - p| <= p*expm1(T_j + log sum p e^T)"
                                " + underflow, T_j = dx_j + u*(2(max-x_j) + log s + 1) + {:.3g}, u={:.3g}",
                                k.own, k.u);
  return k;
}

/// The row-shape test's bound on one finite row: x the stored logits, dx their absolute errors
/// before the softmax, p the exact probabilities, y the kernel's row and r its normalizer
/// (normalize_row's return). Writes the bound on |normalized y - normalized reference| per
/// element (0 at -inf logits, where exactly 0, or -inf, is required).
inline void shape_bound_row(std::span<const double> x, std::span<const double> dx, std::span<const double> p,
                            std::span<const double> y, double r, bool log, const shape_constants& k,
                            std::span<double> bound) {
  const std::size_t n = x.size();
  const double m = classify_row(x).max;
  double s = 0;
  for (double v : x) s += std::exp(v - m);
  const double log_s = std::log(s);  // once per row, not per element
  std::vector<double> t(n, 0.0);
  double excess = 0, total_abs = 0;  // sum_k p_k expm1(T_k), sum_k A_k
  for (std::size_t j = 0; j < n; ++j) {
    if (std::isinf(x[j])) continue;
    const double logit = dx[j] + k.u * (log ? (m - x[j]) : 2.0 * (m - x[j]) + log_s + 1.0);
    t[j] = logit + k.own + (log ? k.log_rel * std::fabs(y[j]) + k.abs : 0.0);
    if (p[j] > 0) excess += p[j] * std::expm1(t[j]);
    total_abs += k.abs;
  }
  const double common = std::log1p(excess);
  for (std::size_t j = 0; j < n; ++j) {
    if (std::isinf(x[j])) {
      bound[j] = 0.0;
      continue;
    }
    const double l = t[j] + common;
    if (log) {
      bound[j] = l + k.fp64_slack * (1.0 + std::fabs(y[j]));
      continue;
    }
    const double rel = p[j] > 0 ? p[j] * std::expm1(l + k.fp64_slack) : 0.0;
    const double q = p[j] > 0 ? p[j] * std::exp(l) : 0.0;
    bound[j] = rel + (k.abs + q * total_abs) / r;
  }
}

}  // namespace opval::ops::softmax
