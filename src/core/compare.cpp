#include "opval/compare.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace opval {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Log-binned histogram (8 bins per octave from 2^-64 to 2^64, plus an exact-zero bin):
// percentiles of ULP errors and of error/bound without sorting 2^26 values.
struct log_histogram {
  static constexpr int per_octave = 8, lo_exp = -64, hi_exp = 64;
  static constexpr int bins = (hi_exp - lo_exp) * per_octave + 2;
  std::vector<std::int64_t> counts = std::vector<std::int64_t>(bins, 0);

  static int bin_of(double v) {
    if (!(v > 0)) return 0;
    if (std::isinf(v)) return bins - 1;
    double pos = (std::log2(v) - lo_exp) * per_octave;
    return std::clamp(static_cast<int>(pos) + 1, 1, bins - 1);
  }
  static double upper_edge(int bin) {
    if (bin == 0) return 0.0;
    if (bin == bins - 1) return inf;
    return std::exp2(static_cast<double>(bin) / per_octave + lo_exp);
  }
  void add(double v) { ++counts[bin_of(v)]; }
  void merge(const log_histogram& o) {
    for (int i = 0; i < bins; ++i) counts[i] += o.counts[i];
  }
  // The upper edge of the bin holding the q-quantile (resolution 2^(1/8), about 9%).
  double quantile(double q, std::int64_t total, double exact_max) const {
    if (total == 0) return 0.0;
    auto target = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(total)));
    std::int64_t seen = 0;
    for (int i = 0; i < bins; ++i) {
      seen += counts[i];
      if (seen >= std::max<std::int64_t>(target, 1)) return std::min(upper_edge(i), exact_max);
    }
    return exact_max;
  }
};

struct candidate {
  double key = -1;
  std::int64_t linear = -1;
  double expected = 0, got = 0, bound = 0, abs_error = 0, ulps = 0;
};

// Per-thread accumulators of one pass.
struct partial {
  std::int64_t count = 0, finite = 0, beyond = 0, nan_mismatch = 0, inf_mismatch = 0, neg_zero = 0;
  std::int64_t ref_significant = 0;
  double max_abs = 0, sum_abs = 0, max_rel = 0, sum_rel = 0, max_ulps = 0, max_over = 0;
  double sum_signed = 0, dot = 0, got_sq = 0, ref_sq = 0;
  bool any_nonzero = false, got_constant = true, ref_constant = true;
  std::int64_t bias_n = 0;
  double bias_sr = 0, bias_sr2 = 0, bias_pl = 0, bias_pl2 = 0;
  log_histogram ulp_hist, over_hist;
  std::array<std::int64_t, ulp_bins> coarse{};
  std::vector<candidate> worst;

  void offer(const candidate& c, int k) {
    if (k <= 0) return;
    if (static_cast<int>(worst.size()) < k) {
      worst.push_back(c);
    } else {
      auto smallest = std::min_element(worst.begin(), worst.end(),
                                       [](const candidate& a, const candidate& b) { return a.key < b.key; });
      if (c.key > smallest->key) *smallest = c;
    }
  }
};

int coarse_bin(double ulps) {
  int b = 0;
  for (double edge : ulp_bin_edges) {
    if (ulps <= edge) return b;
    ++b;
  }
  return ulp_bins - 1;
}

// A fast ulp of a finite double in a float type: 2^(max(e, emin) - p + 1).
struct ulp_of {
  int precision, min_exponent;
  double min_subnormal;
  bool is_float;
  explicit ulp_of(dtype t) {
    const auto& tr = traits(t);
    precision = tr.precision, min_exponent = tr.min_exponent, min_subnormal = tr.min_subnormal;
    is_float = tr.is_float;
  }
  double operator()(double x) const {
    if (!is_float) return 1.0;
    int e = std::ilogb(x);
    if (x == 0 || e < min_exponent) return min_subnormal;
    return std::ldexp(1.0, e - precision + 1);
  }
};

// What the expected value looks like once rounded to the output type (overflow to +-inf).
bool overflow_expected(dtype t, double ref, double bound, double got) {
  if (!std::isinf(got) || std::isnan(ref)) return false;
  if (std::signbit(got) != std::signbit(ref)) return false;
  return std::fabs(ref) + bound >= traits(t).max;
}

}  // namespace

metrics compare_outputs(const compare_input& in) {
  const tensor& got_t = *in.got;
  const std::int64_t n = got_t.numel();
  std::vector<double> got_buffer, ref_buffer, bound_buffer, compute_buffer;
  auto contiguous_f64 = [](const tensor* t, std::vector<double>& buffer) -> const double* {
    if (!t || t->empty()) return nullptr;
    if (t->type() == dtype::f64 && t->is_contiguous()) return t->data_as<double>();
    buffer = t->to_vector();
    return buffer.data();
  };
  const float* got_f32 = (storage_type(got_t.type()) == dtype::f32 && got_t.is_contiguous())
                             ? got_t.data_as<float>() : nullptr;
  const double* got_f64 = got_f32 ? nullptr : contiguous_f64(&got_t, got_buffer);
  const double* ref = contiguous_f64(in.expected, ref_buffer);
  const double* bound = contiguous_f64(in.bound, bound_buffer);
  const double* compute = contiguous_f64(in.compute_bound, compute_buffer);
  const ulp_of ulp(in.ulp_type);
  const double got0 = n ? (got_f32 ? got_f32[0] : got_f64[0]) : 0.0;
  const double ref0 = n ? ref[0] : 0.0;
  const double bound0 = (n && bound) ? bound[0] : 0.0;

  std::vector<partial> partials(omp_get_max_threads());
#pragma omp parallel
  {
    partial& p = partials[omp_get_thread_num()];
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const double g = got_f32 ? static_cast<double>(got_f32[i]) : got_f64[i];
      const double r = ref[i];
      const double b = bound ? bound[i] : 0.0;
      ++p.count;
      if (g != 0.0) p.any_nonzero = true;
      if (!(g == got0 || (std::isnan(g) && std::isnan(got0)))) p.got_constant = false;
      if (!(std::fabs(r - ref0) <= b + bound0 || (std::isnan(r) && std::isnan(ref0)))) p.ref_constant = false;
      if (std::fabs(r) > b) ++p.ref_significant;

      double abs_err, ulps;
      if (std::isnan(g) || std::isnan(r)) {
        if (std::isnan(g) && std::isnan(r)) continue;
        ++p.nan_mismatch;
        abs_err = inf, ulps = inf;
      } else if (std::isinf(g) || std::isinf(r)) {
        if (g == r || overflow_expected(in.ulp_type, r, b, g)) continue;
        ++p.inf_mismatch;
        abs_err = inf, ulps = inf;
      } else {
        if (g == 0.0 && r == 0.0 && std::signbit(g) != std::signbit(r)) ++p.neg_zero;
        const double e = g - r;
        abs_err = std::fabs(e);
        const double u = ulp(r);
        ulps = abs_err / u;
        ++p.finite;
        p.sum_abs += abs_err;
        p.max_abs = std::max(p.max_abs, abs_err);
        if (r != 0.0) {
          double rel = abs_err / std::fabs(r);
          p.sum_rel += rel;
          p.max_rel = std::max(p.max_rel, rel);
        }
        p.sum_signed += e;
        p.dot += g * r, p.got_sq += g * g, p.ref_sq += r * r;
        // Bias-test eligibility: the final rounding dominates this element's error.
        if (r != 0.0 && (!compute || compute[i] < 0.25 * u)) {
          const double s = e / u;
          const double sr = std::signbit(r) ? -s : s;
          ++p.bias_n;
          p.bias_sr += sr, p.bias_sr2 += sr * sr, p.bias_pl += s, p.bias_pl2 += s * s;
        }
      }
      p.max_ulps = std::max(p.max_ulps, ulps);
      p.ulp_hist.add(ulps);
      ++p.coarse[coarse_bin(ulps)];
      double over = 0;
      if (bound) {
        over = b > 0 ? abs_err / b : (abs_err > 0 ? inf : 0.0);
        p.over_hist.add(over);
        p.max_over = std::max(p.max_over, over);
        if (abs_err > b) ++p.beyond;
      }
      double key = bound ? over : abs_err;
      if (in.worst_k > 0 && (static_cast<int>(p.worst.size()) < in.worst_k || key > 0))
        p.offer({key, i, r, g, b, abs_err, ulps}, in.worst_k);
    }
  }

  partial total;
  for (auto& p : partials) {
    total.count += p.count, total.finite += p.finite, total.beyond += p.beyond;
    total.nan_mismatch += p.nan_mismatch, total.inf_mismatch += p.inf_mismatch, total.neg_zero += p.neg_zero;
    total.ref_significant += p.ref_significant;
    total.max_abs = std::max(total.max_abs, p.max_abs), total.sum_abs += p.sum_abs;
    total.max_rel = std::max(total.max_rel, p.max_rel), total.sum_rel += p.sum_rel;
    total.max_ulps = std::max(total.max_ulps, p.max_ulps), total.max_over = std::max(total.max_over, p.max_over);
    total.sum_signed += p.sum_signed, total.dot += p.dot, total.got_sq += p.got_sq, total.ref_sq += p.ref_sq;
    total.any_nonzero |= p.any_nonzero;
    total.got_constant &= p.got_constant, total.ref_constant &= p.ref_constant;
    total.bias_n += p.bias_n, total.bias_sr += p.bias_sr, total.bias_sr2 += p.bias_sr2;
    total.bias_pl += p.bias_pl, total.bias_pl2 += p.bias_pl2;
    total.ulp_hist.merge(p.ulp_hist), total.over_hist.merge(p.over_hist);
    for (int b = 0; b < ulp_bins; ++b) total.coarse[b] += p.coarse[b];
    for (const auto& c : p.worst) total.offer(c, in.worst_k);
  }

  metrics m;
  m.count = total.count;
  m.max_abs_error = total.max_abs;
  m.mean_abs_error = total.finite ? total.sum_abs / total.finite : 0.0;
  m.max_rel_error = total.max_rel;
  m.mean_rel_error = total.finite ? total.sum_rel / total.finite : 0.0;
  const std::int64_t judged = total.ulp_hist.counts.empty() ? 0 : [&] {
    std::int64_t s = 0;
    for (auto c : total.ulp_hist.counts) s += c;
    return s;
  }();
  m.max_ulps = total.max_ulps;
  m.p50_ulps = total.ulp_hist.quantile(0.5, judged, total.max_ulps);
  m.p99_ulps = total.ulp_hist.quantile(0.99, judged, total.max_ulps);
  m.ulp_histogram.assign(total.coarse.begin(), total.coarse.end());
  m.beyond_bound = total.beyond;
  m.max_error_over_bound = total.max_over;
  m.median_error_over_bound = bound ? total.over_hist.quantile(0.5, judged, total.max_over) : 0.0;
  m.nan_mismatch = total.nan_mismatch;
  m.inf_mismatch = total.inf_mismatch;
  m.neg_zero_mismatch = total.neg_zero;
  m.mean_signed_error = total.finite ? total.sum_signed / total.finite : 0.0;
  const double norms = std::sqrt(total.got_sq) * std::sqrt(total.ref_sq);
  m.cosine_similarity = norms > 0 ? total.dot / norms : (total.got_sq == total.ref_sq ? 1.0 : 0.0);
  m.got_all_zero = n > 0 && !total.any_nonzero;
  m.got_constant = n > 1 && total.got_constant;
  m.ref_constant = total.ref_constant;
  m.ref_significant = total.ref_significant;

  // Bias: a z-test on the mean of per-element rounding errors in ULPs.
  bias_result& bias = m.bias;
  bias.eligible = total.bias_n;
  const double nb = static_cast<double>(total.bias_n);
  // Enough elements to see a 0.1-ULP offset at the z threshold with a rounding-error spread of
  // about 0.3 ULP: n >= (z * 0.3 / 0.1)^2.
  const double needed = std::pow(in.bias_z * 0.3 / in.bias_min_ulps, 2.0);
  bias.has_power = nb >= needed;
  if (total.bias_n > 1) {
    auto z_of = [&](double sum, double sum_sq) {
      double mean = sum / nb;
      double var = std::max(sum_sq / nb - mean * mean, 0.0) * nb / (nb - 1.0);
      double se = std::sqrt(var / nb);
      return std::pair{mean, se > 0 ? mean / se : (mean == 0 ? 0.0 : std::copysign(inf, mean))};
    };
    std::tie(bias.sign_relative_mean, bias.sign_relative_z) = z_of(total.bias_sr, total.bias_sr2);
    std::tie(bias.plain_mean, bias.plain_z) = z_of(total.bias_pl, total.bias_pl2);
  }
  if (!bias.has_power) {
    bias.note = "too few rounding-dominated elements (" + std::to_string(total.bias_n) + " < " +
                std::to_string(static_cast<std::int64_t>(std::ceil(needed))) + ") for the bias test to have power";
  } else {
    auto is_biased = [&](double mean, double z) {
      return std::fabs(mean) >= in.bias_min_ulps && std::fabs(z) >= in.bias_z;
    };
    bool toward_zero = is_biased(bias.sign_relative_mean, bias.sign_relative_z);
    bool directed = is_biased(bias.plain_mean, bias.plain_z);
    bias.biased = toward_zero || directed;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "sign-relative mean %+.3f ULP (z=%+.1f), plain mean %+.3f ULP (z=%+.1f) over %lld elements",
                  bias.sign_relative_mean, bias.sign_relative_z, bias.plain_mean, bias.plain_z,
                  static_cast<long long>(total.bias_n));
    bias.note = buf;
  }

  std::sort(total.worst.begin(), total.worst.end(),
            [](const candidate& a, const candidate& b) { return a.key > b.key; });
  for (const auto& c : total.worst)
    m.worst.push_back({got_t.unravel(c.linear), c.expected, c.got, c.bound, c.abs_error, c.ulps});
  return m;
}

}  // namespace opval
