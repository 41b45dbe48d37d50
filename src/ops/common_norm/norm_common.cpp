#include "ops/common_norm/norm_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/error_model.hpp"
#include "core/fill.hpp"
#include "core/rng.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"

namespace opval::ops::norm {
namespace {

// ---------------------------------------------------------------------------------------------
// Fill

constexpr std::uint64_t row_stream = 0x6e6f726d726f7773ull;  // draws per row, not per element

// Per-row scale 2^[-3, 2] and mean offset: the offset (|mean| up to 3 sigma by default, 64 sigma
// for `cancel`) makes the variance's cancellation and the mean's error matter.
double row_value(std::uint64_t seed, std::uint64_t row, std::uint64_t index, double offset_sigmas) {
  const double scale = std::ldexp(1.0, static_cast<int>(std::floor(random_uniform(seed, row_stream, 2 * row) * 6)) - 3);
  const double offset = offset_sigmas * scale * (2 * random_uniform(seed, row_stream, 2 * row + 1) - 1);
  return offset + scale * random_normal(seed, 0, index);
}

bool is_constant_row(std::int64_t row) { return row % 3 == 0; }

void fill_x(const problem& p, const geometry& g, std::uint64_t seed, tensor& x) {
  const bool constant_rows = p.fill == constant_rows_fill;
  const double offset_sigmas = p.fill == "cancel" ? 64.0 : 3.0;
#pragma omp parallel for schedule(static) if (g.rows * g.n >= parallel_threshold)
  for (std::int64_t r = 0; r < g.rows; ++r) {
    for (std::int64_t i = 0; i < g.n; ++i) {
      const auto index = static_cast<std::uint64_t>(r * g.n + i);
      double v = row_value(seed, r, index, offset_sigmas);
      if (constant_rows && is_constant_row(r))  // the row's first value everywhere; odd ones zero
        v = (r % 2 == 1) ? 0.0 : row_value(seed, r, static_cast<std::uint64_t>(r * g.n), offset_sigmas);
      x.set_at(r * g.n + i, v, rounding::rne, overflow::saturate);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reference and exact row statistics

/// Exact (fp64) statistics of one row, used by the reference and the error model.
struct row_stats {
  double centre = 0;    ///< mean (centred) or 0 (rms)
  double power = 0;     ///< variance (centred) or mean square (rms)
  double abs_mean = 0;  ///< mean |x|
  double abs_max = 0;   ///< max |x|
  double dev_max = 0;   ///< max |x - centre|
  bool finite = true;
};

row_stats exact_stats(norm_kind kind, const double* x, std::int64_t n) {
  row_stats s;
  double sum = 0, abs_sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    sum += x[i];
    abs_sum += std::fabs(x[i]);
    s.abs_max = std::max(s.abs_max, std::fabs(x[i]));
  }
  const auto dn = static_cast<double>(n);
  s.finite = std::isfinite(abs_sum);
  s.abs_mean = abs_sum / dn;
  s.centre = kind == norm_kind::layer ? sum / dn : 0.0;
  double sq = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = x[i] - s.centre;  // two passes: no cancellation in fp64 worth mentioning
    sq += d * d;
    s.dev_max = std::max(s.dev_max, std::fabs(d));
  }
  s.power = sq / dn;
  return s;
}

/// The logical values of the optional gamma/beta inputs (1 and 0 when absent), by the
/// geometry's parameter index.
struct affine_params {
  std::vector<double> gamma, beta;
  double g(std::int64_t i) const { return gamma.empty() ? 1.0 : gamma[static_cast<std::size_t>(i)]; }
  double b(std::int64_t i) const { return beta.empty() ? 0.0 : beta[static_cast<std::size_t>(i)]; }
  bool has_beta() const { return !beta.empty(); }
};

affine_params affine_of(std::span<const tensor> in) {
  affine_params a;
  if (in.size() > 1) a.gamma = in[1].to_vector();
  if (in.size() > 2) a.beta = in[2].to_vector();
  return a;
}

// ---------------------------------------------------------------------------------------------
// Contract-exact emulation

/// The statistics a kernel computes, rounded as the contract says (c, P stored in `mid`).
std::pair<double, double> kernel_stats(norm_kind kind, const contract_arith& ar, const double* x, std::int64_t n,
                                       const kernel_variant& v) {
  const auto acc = [&](double t) { return ar.acc(t); };
  const auto dn = static_cast<double>(n);
  const auto at = [&](std::int64_t k) {  // the k-th element in the kernel's visiting order
    return x[v.order == reduce::sum_order::reversed ? n - 1 - k : k];
  };
  if (kind == norm_kind::rms) {
    const double q = reduce::ordered_sum(n, v.order, [&](std::int64_t i) { return acc(x[i] * x[i]); }, acc);
    return {0.0, ar.mid(acc(q / dn))};
  }
  switch (v.variance) {
    case variance_algo::two_pass: {
      const double mu = ar.mid(acc(reduce::ordered_sum(n, v.order, [&](std::int64_t i) { return x[i]; }, acc) / dn));
      const double q = reduce::ordered_sum(
          n, v.order, [&](std::int64_t i) { const double d = acc(x[i] - mu); return acc(d * d); }, acc);
      return {mu, ar.mid(acc(q / dn))};
    }
    case variance_algo::welford: {
      double m = 0, m2 = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        const double d = acc(at(k) - m);
        m = acc(m + acc(d / static_cast<double>(k + 1)));
        m2 = acc(m2 + acc(d * acc(at(k) - m)));
      }
      return {ar.mid(m), ar.mid(acc(m2 / dn))};
    }
    case variance_algo::one_pass: {
      const double s1 = reduce::ordered_sum(n, v.order, [&](std::int64_t i) { return x[i]; }, acc);
      const double s2 = reduce::ordered_sum(n, v.order, [&](std::int64_t i) { return acc(x[i] * x[i]); }, acc);
      const double mu = ar.mid(acc(s1 / dn));
      return {mu, ar.mid(std::max(0.0, acc(acc(s2 / dn) - acc(mu * mu))))};
    }
  }
  return {0.0, 0.0};
}

// ---------------------------------------------------------------------------------------------
// Error model
//
// Per row: n elements, u = unit roundoff of acc, u1 = max(u, u_mid), gamma = the accumulation
// constant of an n-term sum (probabilistic unless the fill is same-sign/constant rows or
// acc_round=rz), gK = gamma_det(K, u1) for K extra roundings. From the exact row: mean|x|,
// max|x|, d = x - mu, max|d|, var (or mean square P for rms_norm).
//  1. mean: sum (gamma sum|x|), /n or *fl(1/n), store in mid -> e_mu (statistic_errors).
//  2. variance, two-pass: sum of fl(fl(x - mu_hat)^2) = sum (d - e)^2 (1 + 3u) = n var + n e^2
//     (the cross term vanishes because sum d = 0), plus gamma of the sum -> e_mu^2 + (gamma +
//     g5)(var + e_mu^2). Welford (and Chan's pairwise merging of (mean, M2)) is NOT first-order
//     insensitive to the running means' errors: M2 picks up sum_k 2 (x_k - m_k-1) delta_k-1,
//     bounded by 2 e_run (sum|d|/n + max|d|) <= 4 e_run max|d| for the sequential form and by
//     ~4.8 e_run max|d| for balanced merge trees: the term 5 e_run max|d|.
//     One-pass E[x^2] - E[x]^2 is not covered: its error is ~u mean^2, which exceeds this bound
//     where |mean| >> 5 (gamma/u) max|d| (short rows with large offsets); a kernel doing it is
//     rightly failed there (test one_pass_variance_fails_on_extreme_offsets), though long
//     rows may let it pass (the bound must stay sound for Welford).
//  3. w = P + eps: eps rounded to acc (u eps), the addition (u w); theta = e_w / w;
//     rsqrt: |r_hat/r - 1| <= rho = (1 - theta)^-1/2 (1 + ulps.rsqrt eps_acc)(1 + u_mid) - 1.
//     Whatever P_hat >= 0 is, r_hat <= r_max = rsqrt(eps (1-u)^2) (1 + ...): zero-variance rows
//     (var = 0, y = beta exactly) stay bounded when e_var >> eps.
//  4. y = (x - mu) r gamma + beta: the absolute error of x - mu_hat is amplified by r = 1/s:
//     |p_hat - p| <= min(e_d r (1 + rho) + |d| r rho, |d| r + (|d| + e_d) r_max), then the
//     product with gamma and the addition of beta each round once (element_bound).
// The bound is for "statistics in acc, rsqrt within ulps.rsqrt": any summation order, two-pass
// or Welford/Chan, fused or folded affine (x (r g) + (beta - mu r g)) all stay within it. It
// holds for any geometry: a row is n elements, wherever they lie and whichever parameters
// they use.

/// Constants of one case: unit roundoffs, the accumulation constant and rsqrt's accuracy.
struct bound_constants {
  double u = 0;          ///< unit roundoff of acc
  double u_mid = 0;      ///< unit roundoff of mid (statistics storage)
  double u1 = 0;         ///< max(u, u_mid)
  double gamma = 0;      ///< accumulation constant of an n-term sum in acc
  double rsqrt_rel = 0;  ///< relative error of rsqrt: ulps.rsqrt * epsilon(acc)
};

double gdet(double k, double u) { return gamma_deterministic(k, u); }

/// Absolute error bounds of the kernel's centre and power (see the header comment).
struct stat_errors {
  double centre = 0;
  double power = 0;
};

/// centred:
///   e_mu  = (gamma + g3) * mean|x| + g4 * max|d|         (sum, /n, store in mid; Welford's
///                                                         correction terms 2u|x_k - m_k-1|/k)
///   e_run = (gamma + g3) * max|x|  + g4 * max|d|         (any partial/running mean)
///   e_var = e_mu^2 + (gamma + g5) * (var + e_mu^2)       (two-pass: squares of d - e_mu)
///           + 5 * e_run * max|d|                         (Welford / Chan merges: first order in
///                                                         the running means' errors)
/// rms: e_P = (gamma + g3) * mean(x^2).  gK = K u1 / (1 - K u1).
stat_errors statistic_errors(norm_kind kind, const row_stats& s, const bound_constants& k) {
  if (kind == norm_kind::rms) return {0.0, (k.gamma + gdet(3, k.u1)) * s.power};
  const double e_mu = (k.gamma + gdet(3, k.u1)) * s.abs_mean + gdet(4, k.u) * s.dev_max;
  const double e_run = (k.gamma + gdet(3, k.u1)) * s.abs_max + gdet(4, k.u) * s.dev_max;
  const double e_var = e_mu * e_mu + (k.gamma + gdet(5, k.u1)) * (s.power + e_mu * e_mu) + 5 * e_run * s.dev_max;
  return {e_mu, e_var};
}

/// What is known about the kernel's r_hat = rsqrt(P_hat + eps) against r = 1/sqrt(P + eps).
struct rstd_error {
  double r = 0;    ///< exact
  double rel = 0;  ///< |r_hat - r| <= rel * r; +inf when the power's error may reach P + eps
  double max = 0;  ///< r_hat <= max whatever P_hat >= 0 is (rsqrt(eps) inflated); +inf for eps = 0
};

rstd_error rstd_bound(double power, double e_power, double eps, const bound_constants& k) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double w = power + eps;
  // eps rounded to acc, then P_hat + eps_hat rounded once.
  const double e_w = e_power + k.u * eps + k.u * (w + e_power + k.u * eps);
  const double after = (1 + k.rsqrt_rel) * (1 + k.u_mid);  // rsqrt's ulps, then stored in mid
  rstd_error e;
  e.r = w > 0 ? 1 / std::sqrt(w) : inf;
  e.rel = (w > 0 && e_w < w) ? after / std::sqrt(1 - e_w / w) - 1 : inf;
  e.max = eps > 0 ? after / std::sqrt(eps * (1 - k.u) * (1 - k.u)) : inf;
  return e;
}

/// Bound on |y_hat - y| before the output rounding, for one element:
///   e_d  = e_mu + g2 (|x| + |mu| + e_mu)         (x - mu_hat, or the folded x*(r g) - mu*(r g))
///   B_p  = min( e_d r (1+rho) + |d| r rho,  |d| r + (|d| + e_d) r_max ),  plus u (p + B_p)
///   affine: e = |g| B_p (1+u) + u |p g|, then + u (|p g| + e + |b|)
/// The second form of B_p keeps rows of (near) zero variance bounded: there y = beta exactly,
/// while the kernel's d_hat = mu - mu_hat is amplified by at most rsqrt(eps).
double element_bound(norm_kind kind, double x, double gamma, double beta, const row_stats& s, const stat_errors& e,
                     const rstd_error& rs, const bound_constants& k) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double d = std::fabs(x - s.centre);
  const double e_d = kind == norm_kind::layer ? e.centre + gdet(2, k.u) * (std::fabs(x) + std::fabs(s.centre) + e.centre) : 0.0;
  const double p = d * rs.r;
  const double bp1 = rs.rel == inf ? inf : e_d * rs.r * (1 + rs.rel) + p * rs.rel;
  const double bp2 = rs.max == inf ? inf : p + (d + e_d) * rs.max;
  double bp = std::min(bp1, bp2);
  bp += k.u * (p + bp);
  const double t = p * std::fabs(gamma);
  const double e_prod = bp * std::fabs(gamma) * (1 + k.u) + k.u * t;
  return e_prod + k.u * (t + e_prod + std::fabs(beta));
}

bound_constants constants_of(const problem& p, const geometry& g, const fill_traits& f, const bound_options& o,
                             accumulation_gamma& ag) {
  const contract& c = p.dt;
  bound_constants k;
  k.u = unit_roundoff(c.acc, c.acc_round);
  k.u_mid = unit_roundoff(c.mid, c.acc_round);
  k.u1 = std::max(k.u, k.u_mid);
  ag = accumulation_constant(static_cast<double>(g.n), 2.0 * static_cast<double>(g.rows), c, f, o);
  k.gamma = ag.gamma;
  k.rsqrt_rel = c.ulps.rsqrt * traits(c.acc).epsilon;
  return k;
}

}  // namespace

std::string norm_case_not_meaningful(norm_kind kind, const geometry& g, const std::string& fill) {
  if (!g.affine && g.n == 1 && kind != norm_kind::rms)
    return "a row of one element without affine is always beta or 0: nothing to test";
  if (!g.affine && kind == norm_kind::rms && fill == constant_rows_fill)
    return "constant rows without gamma repeat one rounding error, which the bias test cannot judge";
  return "";
}

std::vector<std::string> suite_contracts() { return {"f32", "bf16:f32:bf16", "f16:f32:f16"}; }

std::vector<std::string> suite_fills() {
  return {"default", std::string(constant_rows_fill), "wide", "cancel", "special", "large", "positive", "uniform", "normal"};
}

// ---------------------------------------------------------------------------------------------
// The op_spec the norms derive from

std::vector<std::string> norm_spec::fills() const {
  std::vector<std::string> f = generic_fill_names();
  f.emplace_back(constant_rows_fill);
  return f;
}

void norm_spec::validate(const problem& p) const {
  const std::string_view op = name();
  const double eps = p.get_real("eps");
  if (!(eps >= 0) || !std::isfinite(eps)) throw error(fmt::format("{} eps={} must be finite and >= 0", op, eps));
  if (eps == 0 && p.fill == constant_rows_fill)
    throw error(fmt::format("{} fill=constant_rows needs eps > 0 (zero variance and eps=0 divide by zero)", op));
  const std::vector<std::string> known = fills();
  if (p.fill != "default" && std::find(known.begin(), known.end(), p.fill) == known.end())
    throw error(fmt::format("{} does not know fill={}", op, p.fill));
  const contract& c = p.dt;
  auto io_type = [](dtype t) { return t == dtype::f32 || t == dtype::bf16 || t == dtype::f16; };
  const bool ok = io_type(c.src) && (c.wei == c.src || c.wei == dtype::f32) && !c.rounds_inputs() &&
                  (c.acc == dtype::f32 || c.acc == dtype::f64) && is_float(c.mid) && io_type(c.dst);
  if (!ok)
    throw error(fmt::format("{} does not support contract {} (inputs f32/bf16/f16, statistics in f32 or f64, "
                            "output f32/bf16/f16; e.g. dt=bf16:f32:bf16)", op, c.types_string()));
}

std::vector<operand> norm_spec::inputs(const problem& p) const {
  const geometry g = geometry_of(p);
  std::vector<operand> in{{"x", p.dt.src, p.get_dims("shape"), data_layout(p)}};
  if (g.affine) {
    in.push_back({"gamma", p.dt.wei, g.param_shape, {}});
    if (kind_ == norm_kind::layer) in.push_back({"beta", p.dt.wei, g.param_shape, {}});
  }
  return in;
}

std::vector<operand> norm_spec::outputs(const problem& p) const {
  std::vector<operand> out{{"y", p.dt.dst, p.get_dims("shape"), data_layout(p)}};
  const geometry g = geometry_of(p);
  if (g.stats) {
    // In acc, as PyTorch's native_layer_norm (f32 for half inputs) and ONNX's stash_type.
    out.push_back({"mean", p.dt.acc, g.stats_shape, {}});
    out.push_back({"inv_std", p.dt.acc, g.stats_shape, {}});
  }
  return out;
}

op_counts norm_spec::counts(const problem& p) const {
  const double numel = static_cast<double>(element_count(p.get_dims("shape")));
  const geometry g = geometry_of(p);
  const double params =
      g.affine ? (kind_ == norm_kind::layer ? 2.0 : 1.0) * static_cast<double>(element_count(g.param_shape)) : 0.0;
  op_counts c;
  c.flops = numel * ((kind_ == norm_kind::layer ? 5.0 : 3.0) + (g.affine ? 2.0 : 0.0));
  c.bytes = numel * (traits(p.dt.src).size_bytes + traits(p.dt.dst).size_bytes) + params * traits(p.dt.wei).size_bytes;
  return c;
}

/// Fills x (stream 0), gamma ~ 1 + N(0, 1/16) (stream 1) and beta ~ N(0, 1/16) (stream 2).
/// default/constant_rows/cancel use per-row scales and offsets (see row_value); the generic
/// fills keep their meaning (`normal` is N(0,1)), except `large`: magnitudes just small enough
/// that sum(x^2) cannot overflow the accumulator.
fill_traits norm_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  const geometry g = geometry_of(p);
  fill_traits ft;
  const std::string& name = p.fill;
  if (name == "default" || name == "cancel" || name == constant_rows_fill) {
    fill_x(p, g, seed, in[0]);
  } else {
    fill_params fp;
    fp.kind = parse_fill_kind(name);
    if (fp.kind == fill_kind::large)
      fp.scale = std::min(traits(p.dt.src).max / 2,
                          std::sqrt(traits(p.dt.acc).max / static_cast<double>(std::max<std::int64_t>(g.n, 1))) / 4);
    fill_tensor(in[0], fp, seed, 0);
  }
  // Constant rows: the n equal terms of the mean's sum round alike, so errors add up linearly.
  ft.same_sign = name == "positive" || name == constant_rows_fill;
  ft.repeated_values = name == constant_rows_fill;  // constant rows repeat one rounding error
  ft.has_specials = name == "special";
  for (std::size_t k = 1; k < in.size(); ++k) {
    const double centre = k == 1 ? 1.0 : 0.0;
    const std::int64_t count = in[k].numel();
#pragma omp parallel for schedule(static) if (count >= parallel_threshold)
    for (std::int64_t i = 0; i < count; ++i)
      in[k].set_at(i, centre + 0.25 * random_normal(seed, k, static_cast<std::uint64_t>(i)));
  }
  return ft;
}

int norm_spec::perturbed_input(const problem& p) const {
  const geometry g = geometry_of(p);
  return kind_ == norm_kind::layer && g.n == 1 && g.affine ? 2 : 0;
}

void norm_spec::norm_reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const geometry g = geometry_of(p);
  const std::vector<double> x = in[0].to_vector();
  const affine_params a = affine_of(in);
  double* y = out[0].data_as<double>();
  double* mean = g.stats ? out[1].data_as<double>() : nullptr;
  double* inv_std = g.stats ? out[2].data_as<double>() : nullptr;
#pragma omp parallel for schedule(static) if (g.rows * g.n >= parallel_threshold)
  for (std::int64_t r = 0; r < g.rows; ++r) {
    const double* xr = x.data() + r * g.n;
    const row_stats s = exact_stats(kind_, xr, g.n);
    const double rstd = 1.0 / std::sqrt(s.power + g.eps);
    if (g.stats) mean[r] = s.centre, inv_std[r] = rstd;
    for (std::int64_t i = 0; i < g.n; ++i) {
      const std::int64_t j = g.param_index(r, i);
      y[r * g.n + i] = (xr[i] - s.centre) * rstd * a.g(j) + a.b(j);
    }
  }
}

/// Runs the norm as a kernel of the contract would: statistics in acc (stored in mid),
/// rsqrt in acc (correctly rounded), y = ((x - c) * r) * gamma + beta rounded step by step in
/// acc, then to dst. `v` selects legitimately different algorithms (tests).
void norm_spec::simulate_with(const problem& p, std::span<const tensor> in, std::span<tensor> out,
                              const kernel_variant& v) const {
  const geometry g = geometry_of(p);
  const contract_arith ar(p.dt);
  const std::vector<double> x = in[0].to_vector();
  const affine_params a = affine_of(in);
  const double eps = ar.acc(v.eps_override >= 0 ? v.eps_override : g.eps);
  std::vector<double> y(x.size());
  std::vector<double> mean(g.stats ? g.rows : 0), inv_std(g.stats ? g.rows : 0);
#pragma omp parallel for schedule(static) if (g.rows * g.n >= parallel_threshold)
  for (std::int64_t r = 0; r < g.rows; ++r) {
    const double* xr = x.data() + r * g.n;
    const auto [centre, power] = kernel_stats(kind_, ar, xr, g.n, v);
    const double rstd = ar.mid(ar.acc(1.0 / std::sqrt(ar.acc(power + eps))));
    if (g.stats) mean[r] = centre, inv_std[r] = rstd;
    for (std::int64_t i = 0; i < g.n; ++i) {
      const std::int64_t j = g.param_index(r, i);
      double t = ar.acc(ar.acc(xr[i] - centre) * rstd);
      if (!a.gamma.empty()) t = ar.acc(t * a.g(j));
      if (a.has_beta()) t = ar.acc(t + a.b(j));
      y[static_cast<std::size_t>(r * g.n + i)] = ar.out(t);
    }
  }
  out[0].assign(y, p.dt.dst_round);
  if (g.stats) out[1].assign(mean), out[2].assign(inv_std);
}

std::vector<error_bound> norm_spec::norm_bound(const problem& p, const fill_traits& f, const bound_options& o,
                                               std::span<const tensor> in) const {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const geometry g = geometry_of(p);
  accumulation_gamma ag;
  const bound_constants k = constants_of(p, g, f, o, ag);
  const std::vector<double> x = in[0].to_vector();
  const affine_params a = affine_of(in);
  const double eta = underflow_unit(p.dt.acc, p.dt.denorm);
  error_bound b;
  b.compute = tensor(dtype::f64, p.get_dims("shape"));
  double* out = b.compute.data_as<double>();
  b.meaningful = ag.meaningful;
  b.why_not = ag.why_not;
  // The statistics outputs: the mean within e_mu, inv_std within rho r (or, where the power's
  // error may reach P + eps, between 0 and r_max).
  error_bound bm = b, br = b;
  bm.compute = tensor(dtype::f64, g.stats_shape);
  br.compute = tensor(dtype::f64, g.stats_shape);
  double* out_mean = g.stats ? bm.compute.data_as<double>() : nullptr;
  double* out_rstd = g.stats ? br.compute.data_as<double>() : nullptr;
#pragma omp parallel for schedule(static) if (g.rows * g.n >= parallel_threshold)
  for (std::int64_t r = 0; r < g.rows; ++r) {
    const double* xr = x.data() + r * g.n;
    const row_stats s = exact_stats(kind_, xr, g.n);
    const stat_errors e = statistic_errors(kind_, s, k);
    const rstd_error rs = rstd_bound(s.power, e.power, g.eps, k);
    if (g.stats) {
      const double er = rs.rel == inf ? std::max(rs.r, rs.max) : rs.rel * rs.r;
      out_mean[r] = s.finite ? e.centre : 0.0;
      out_rstd[r] = !s.finite ? 0.0 : std::isfinite(er) ? er : inf;
    }
    for (std::int64_t i = 0; i < g.n; ++i) {
      const std::int64_t j = g.param_index(r, i);
      // Rows with NaN/Inf: the reference is NaN/Inf and is compared by class, not by bound.
      // Each of the element's four steps (centre, scale, gamma, beta) may land in acc's subnormal
      // range, where rounding is absolute (eta), not relative; the steps before gamma scale by |g|.
      const double underflow = eta * (2 * std::max(1.0, std::fabs(a.g(j))) + 2);
      const double eb = s.finite ? element_bound(kind_, xr[i], a.g(j), a.b(j), s, e, rs, k) + underflow : 0.0;
      out[r * g.n + i] = std::isfinite(eb) ? eb : std::numeric_limits<double>::infinity();
    }
  }
  const std::string stats = kind_ == norm_kind::layer
      ? "e_mu=(gamma+g3)mean|x|+g4 max|d|; e_var=e_mu^2+(gamma+g5)(var+e_mu^2)+5 e_run max|d|, "
        "e_run=(gamma+g3)max|x|+g4 max|d|"
      : "e_P=(gamma+g3)mean(x^2)";
  b.formula = fmt::format(
      "{}: |dy| <= |g| min(e_d r(1+rho)+|d| r rho, |d| r+(|d|+e_d) rmax)(1+u)+u(|pg|+|b|)+eta(2max(1,|g|)+2); {}; "
      "rho from (e_P+u eps+u(P+eps))/(P+eps), rsqrt {} ulp; gamma={} ({}), u={:.3g}",
      name(), stats, p.dt.ulps.rsqrt, ag.gamma, ag.formula, k.u);
  if (!g.stats) return {b};
  bm.formula = fmt::format("{} mean: e_mu=(gamma+g3)mean|x|+g4 max|d|, gamma={} ({}), u={:.3g}", name(), ag.gamma,
                           ag.formula, k.u);
  br.formula = fmt::format("{} inv_std: rho r, rho from (e_P+u eps+u(P+eps))/(P+eps) (rsqrt {} ulp, stored in mid); "
                           "r_max = rsqrt(eps) where e_P may reach P+eps",
                           name(), p.dt.ulps.rsqrt);
  return {b, bm, br};
}

const norm_spec& norm_of(const problem& p) {
  const auto* spec = dynamic_cast<const norm_spec*>(&find_op(p.op()));
  if (spec == nullptr) throw error(fmt::format("{} is not a normalization op", p.op()));
  return *spec;
}

}  // namespace opval::ops::norm
