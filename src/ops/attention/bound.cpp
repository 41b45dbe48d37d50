// attention: error bound, composed from the matmul and softmax error models.
//
// Per query row, with u = unit roundoff of acc, S_j = scale q.k_j + bias_j the exact logits,
// p_j = softmax(S)_j exact, O = sum_j p_j v_j exact:
//  1. logits:  |dS_j| <= (g_D + r_q + r_k) |scale| sum_d |q_d k_jd| + 3u |scale q.k_j| + u |S_j|
//     g_D = accumulation_constant(D) of the dot product, r_* the in-kernel input rounding
//     (tf32), 3u for the rounded scale, the scaling product and a folded log2(e) (exp2
//     kernels), u|S_j| for adding the bias.
//     When g_D is probabilistic (round-to-nearest, data that may cancel), the dot products'
//     rounding errors are not summed over keys in the worst case: to first order they move O
//     by sum_j p_j (v_j - O) eps_j (a common shift of the logits cancels), a linear form in
//     Lk*D independent mean-zero rounding errors, each of weight <= p_j |v_j - O| |scale|
//     sum_d |q_d k_jd|. Higham & Mary's argument bounds it by
//       lambda u sqrt(D sum_j (p_j |v_j - O| |scale| sum_d |q_d k_jd|)^2) (1 + 4 lambda max_j dS_j)
//     (lambda = probabilistic_lambda over the outputs, n = Lk*D), and g_D leaves dS_j.
//  2. softmax: dS_j enter softmax_numerics.hpp's bound_row as the logit perturbations dx_j,
//     giving per key an individual log-error L_ind_j and a common one L_com (the denominator
//     and the division: a factor shared by every key, so it scales O itself, not sum p|v|).
//  3. P rounded to mid (u_mid, when mid is narrower than acc) and to the math type (r_p, tf32):
//     ri_j = expm1(L_ind_j + l(u_mid) + l(r_p)), rc = expm1(L_com), rt_j = expm1(L_ind_j + ... + L_com),
//     abs_j = the softmax underflow term + the underflow units of mid / math.
//  4. P.V:  |O^ - O| <= (1 + rc) sum_j (p_j ri_j + abs_j) |v_j| + rc |O|
//                        + r_v sum_j w_j + g_Lk.sum_error(sum_j w_j, sum_j w_j^2),
//     w_j = (p_j (1 + rt_j) + abs_j) |v_j| (1 + r_v) bounding the kernel's term |P^_j v^_j|;
//     g_Lk = accumulation_constant(Lk) (V's signs decide deterministic vs probabilistic):
//     gamma sum w, or for random-sign V (fill_traits::random_signs) also
//     root sqrt(sum w^2) + linear sum w (random_sign_constants). The kernel's terms
//     P^_j v^_j have V's signs (P^ depends on Q, K, the mask only) and its order of additions
//     is fixed by the shapes, as that bound needs.
//     Online (FlashAttention) rescaling of O is in L_ind_j (softmax_numerics.hpp: resc_rel):
//     it multiplies a partial sum by a computed exp(m_old - m_new), a factor that depends on
//     Q and K only, so the terms, counted in the final scale, keep V's signs; the R rounded
//     products are further nodes of the summation tree (n = Lk + R in random_sign_constants).
//     With random-sign V the rescalings' relative errors eps_B (|eps_B| <= (2 ulps.exp + 1) u)
//     also leave ri_j: they multiply the running output X_B, a partial sum of the terms over
//     the blocks visited before B, so their error is sum_B eps_B prod_{B'>B} (1 + eps_B') X_B
//     <= l(resc_rel) max_B |X_B|, and |X_B| <= min(sum w, node sqrt(sum w^2)) (every node's
//     exact partial sum, on the event of the random-sign bound) + (gamma_det(Lk + R) +
//     l(resc_rel)) sum w (the roundings before B). The same factors scale the running
//     denominator: that part stays in rc |O|.
// With softcap=c the scores t = scale q.k pass through c tanh(t/c) before the bias: step 1's
// error of t (without the bias term) becomes dt + 2u|t| + c err_tanh + 2u|c tanh(t/c)|
// (|tanh'| <= 1; err_tanh = ulps.tanh ulps of acc at tanh(t/c) plus its underflow unit); the
// probabilistic term is unchanged (tanh' <= 1 only shrinks its weights).
// Rows with a NaN logit or no visible key get bound 0: NaN, respectively exactly 0, is required
// (the runner still adds the output rounding and underflow unit).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error_model.hpp"
#include "ops/attention/attention.hpp"
#include "ops/common_softmax/softmax_numerics.hpp"

namespace opval::ops::attention {
namespace {

// The rounding of P before P.V: relative errors (mid, then math) and their underflow units.
struct p_rounding {
  double u_mid = 0, r_p = 0, uf = 0;
};

p_rounding p_rounding_of(const contract& c) {
  p_rounding r;
  if (traits(c.mid).precision < traits(c.acc).precision) {
    r.u_mid = unit_roundoff(c.mid, c.acc_round);
    r.uf += underflow_unit(c.mid, c.denorm);
  }
  r.r_p = input_rounding_error(c, c.mid);
  if (r.r_p > 0) r.uf += underflow_unit(c.math, c.denorm);
  return r;
}

// One thread's per-row buffers: per key (prob .. sigma; ri_split: ri without the rescalings)
// and per output column (rss; the P.V terms' sum of magnitudes pv_abs and of squares pv_sq;
// step 4's first sum with ri, own, and with ri_split, own_split).
struct row_scratch {
  std::vector<double> prob, ds, ri, ri_split, rt, ab, sigma, rss, pv_abs, pv_sq, own, own_split;
  explicit row_scratch(const attention_shape& s)
      : prob(s.lk), ds(s.lk), ri(s.lk), ri_split(s.lk), rt(s.lk), ab(s.lk), sigma(s.lk), rss(s.dv), pv_abs(s.dv),
        pv_sq(s.dv), own(s.dv), own_split(s.dv) {}
};

// The accumulation constant of P.V: the classic one, and for random-sign V (fill_traits::
// random_signs) the random-sign bound over a tree of Lk - 1 additions and the R online-softmax
// rescalings of the running output, each a rounded product of a partial sum (docs/NUMERICS.md,
// "Random-sign data").
accumulation_gamma pv_constant(const attention_shape& s, const contract& c, const fill_traits& f,
                               const bound_options& o, const softmax::error_constants& k) {
  const double outputs = static_cast<double>(s.rows() * s.dv), n = static_cast<double>(s.lk);
  accumulation_gamma g = accumulation_constant(n, outputs, c, f, o);
  if (g.random_signs) random_sign_constants(n + k.rescalings, outputs, k.u, o.false_alarm, 1, g);
  return g;
}

}  // namespace

std::vector<error_bound> attention_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                               std::span<const tensor> in, std::span<const tensor> ref) const {
  using softmax::log_factor;
  const attention_data d(p, in);
  const attention_shape& s = d.s;
  const contract& c = p.dt;
  const double rows = static_cast<double>(s.rows());
  const double u = unit_roundoff(c.acc, c.acc_round);
  const accumulation_gamma g_qk = accumulation_constant(static_cast<double>(s.d), rows * s.lk, c, f, o);
  const softmax::error_constants k = softmax::make_error_constants(static_cast<double>(s.lk), rows, c, o, false);
  const accumulation_gamma g_pv = pv_constant(s, c, f, o, k);
  const double r_qk = input_rounding_error(c, c.src) + input_rounding_error(c, c.wei);
  const double r_v = input_rounding_error(c, c.wei);
  // Probabilistic dot products: their rounding errors combine over keys in quadrature.
  const bool qk_random = g_qk.meaningful && g_qk.gamma < gamma_deterministic(static_cast<double>(s.d), u);
  const double lambda = probabilistic_lambda(rows * s.dv, static_cast<double>(s.lk * s.d), u, o.false_alarm);
  const double qk_rel = (qk_random ? 0.0 : g_qk.gamma) + r_qk;
  const double qk_sigma = qk_random ? u * std::sqrt(static_cast<double>(s.d)) : 0.0;
  const p_rounding pr = p_rounding_of(c);
  // Random-sign V: the online rescalings' errors are charged on the partial sums they scale
  // (at most resc_rel times the largest, step 4 above) instead of on every term.
  const double resc_on_nodes = g_pv.random_signs ? log_factor(k.resc_rel) : 0.0;
  const double tree_gamma = gamma_deterministic(static_cast<double>(s.lk) + k.rescalings, u);
  // Soft-capping c tanh(t/c) of a score t known to within dt: the argument t/c (the cap and the
  // division rounded: 2u|t|) moves tanh by at most its argument's error (|tanh'| <= 1, so
  // c * (dt + 2u|t|)/c), tanh itself is within ulps.tanh ulps of acc (and its underflow
  // unit), scaled by c, and the product c * tanh (with the cap rounded) adds 2u|c tanh|.
  const double uf_acc = underflow_unit(c.acc, c.denorm);
  auto softcap_error = [&](double dt, double t, double capped) {
    const double arg_err = dt + 2.0 * u * std::fabs(t);  // times 1/c: the error of t/c
    // The ulp is taken where the kernel's tanh may lie: moved by the argument's error, then
    // by k ulps (in case it crosses a binade).
    const double th = std::fabs(capped) / s.softcap + arg_err / s.softcap, k_tanh = c.ulps.tanh;
    const double tanh_err = k_tanh * ulp(c.acc, th + k_tanh * ulp(c.acc, th)) + uf_acc;
    return arg_err + s.softcap * tanh_err + 2.0 * u * std::fabs(capped);
  };
  const double* oref = ref[0].data_as<double>();
  std::vector<double> e(static_cast<std::size_t>(s.rows() * s.dv), 0.0);
  for_each_query_row(
      d, [&] { return row_scratch(s); },
      [&](row_scratch& w, const double* q, const double* kr, std::int64_t b, std::int64_t hd, std::int64_t i,
          std::int64_t j) {
        double dot = 0, mag = 0;
        for (std::int64_t x = 0; x < s.d; ++x) dot += q[x] * kr[x], mag += std::fabs(q[x] * kr[x]);
        const double score = s.scale * dot, capped = s.cap(score);
        const double logit = capped + d.bias(b, hd, i, j);
        const double ds_score = qk_rel * std::fabs(s.scale) * mag + 3.0 * u * std::fabs(score);
        w.ds[j] = (s.softcap > 0 ? softcap_error(ds_score, score, capped) : ds_score) + u * std::fabs(logit);
        w.sigma[j] = qk_sigma * std::fabs(s.scale) * mag;
        return logit;
      },
      [&](row_scratch& buf, std::int64_t row, std::int64_t b, std::int64_t hd, std::int64_t,
          const std::vector<double>& logits) {
        auto& [prob, ds, ri, ri_split, rt, ab, sigma, rss, pv_abs, pv_sq, own, own_split] = buf;
        if (softmax::classify_row(logits).kind != softmax::row_kind::finite) return;
        softmax::reference_row(logits, prob, false, softmax::empty_row::zero);
        const softmax::row_bound rb = softmax::bound_row(logits, prob, ds, k);
        const double rc = std::expm1(rb.log_com);
        for (std::int64_t j = 0; j < s.lk; ++j) {
          const bool masked = std::isinf(logits[j]);
          const double li = rb.log_ind(j) + log_factor(pr.u_mid) + log_factor(pr.r_p);
          ri[j] = masked ? 0.0 : std::expm1(li);
          ri_split[j] = masked ? 0.0 : std::expm1(li - resc_on_nodes);
          rt[j] = masked ? 0.0 : std::expm1(li + rb.log_com);
          ab[j] = masked ? 0.0 : rb.abs[j] + pr.uf;
        }
        double* er = e.data() + row * s.dv;
        const double* orow = oref + row * s.dv;
        for (auto* sums : {&rss, &pv_abs, &pv_sq, &own, &own_split}) std::fill(sums->begin(), sums->end(), 0.0);
        double sigma_max = 0;
        for (std::int64_t j = 0; j < s.lk; ++j) {
          if (std::isinf(logits[j])) continue;
          const double* v = d.v_row(b, hd, j);
          const double own_j = (1.0 + rc) * (prob[j] * ri[j] + ab[j]);
          const double own_split_j = (1.0 + rc) * (prob[j] * ri_split[j] + ab[j]);
          const double weight = prob[j] * (1.0 + rt[j]) + ab[j];  // bounds the kernel's |P_j|
          sigma_max = std::max(sigma_max, sigma[j]);
          for (std::int64_t x = 0; x < s.dv; ++x) {
            const double av = std::fabs(v[x]), term = weight * av;
            own[x] += own_j * av;
            own_split[x] += own_split_j * av;
            pv_abs[x] += term;
            pv_sq[x] += term * term;
            const double w = prob[j] * std::fabs(v[x] - orow[x]) * sigma[j];
            rss[x] += w * w;
          }
        }
        const double second_order = 1.0 + 4.0 * lambda * sigma_max;
        for (std::int64_t x = 0; x < s.dv; ++x) {
          // The rescalings charged per term (own) or on the partial sums: the smaller, both sound.
          // The terms with v as the kernel holds it (rounded to math: 1 + r_v).
          const double held = (1.0 + r_v) * pv_abs[x], held_sq = (1.0 + r_v) * (1.0 + r_v) * pv_sq[x];
          const double on_nodes =
              resc_on_nodes * (g_pv.partial_sum_bound(held, held_sq) + (tree_gamma + resc_on_nodes) * held);
          er[x] += std::min(own[x], own_split[x] + on_nodes) + rc * std::fabs(orow[x]) +
                   lambda * std::sqrt(rss[x]) * second_order + r_v * pv_abs[x] + g_pv.sum_error(held, held_sq);
        }
      });
  error_bound eb;
  eb.compute = make_f64({s.b, s.h, s.lq, s.dv}, e);
  eb.meaningful = g_qk.meaningful && g_pv.meaningful && k.meaningful;
  eb.why_not = !g_qk.meaningful ? g_qk.why_not : !g_pv.meaningful ? g_pv.why_not : k.why_not;
  eb.formula = fmt::format(
      "attention: dS = ({} + r_in {:.3g})|scale|sum|q||k| + 3u|scale q.k|{} + u|S|{}; {}; P to mid u={:.3g}, math r={:.3g}; "
      "O: (1+rc) sum (p ri + abs)|v| + rc|O| + r_v {:.3g} sum |P||v| + {}",
      qk_random ? "0 (probabilistic)" : g_qk.formula, r_qk,
      s.softcap > 0 ? fmt::format(" + 2u|t| + softcap {:.3g} (ulps.tanh {:.3g} ulp of tanh(t/softcap)) + 2u|cap(t)|",
                                  s.softcap, c.ulps.tanh)
                    : "",
      qk_random ? fmt::format(" + lambda {:.3g} u sqrt(D sum_j (p_j |v_j - O| |scale| sum|q||k_j|)^2)", lambda) : "",
      k.formula, pr.u_mid, pr.r_p, r_v,
      g_pv.random_signs ? fmt::format("min({} sum |P||v|, {:.3g} sqrt(sum (P v)^2) + {:.3g} sum |P||v|) (random-sign V, "
                                      "n = Lk + {} rescalings); rescalings: per term or l(resc) (min(sum |P||v|, {:.3g} "
                                      "sqrt(sum (P v)^2)) + {:.3g} sum |P||v|), the smaller",
                                      g_pv.formula, g_pv.root, g_pv.linear, k.rescalings, g_pv.node,
                                      tree_gamma + resc_on_nodes)
                        : fmt::format("{} sum |P||v|", g_pv.formula));
  return {eb};
}

}  // namespace opval::ops::attention
