#include "core/compare.hpp"

#include <omp.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

namespace opval {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Log-binned histogram (8 bins per octave from 2^-64 to 2^64, plus an exact-zero bin):
// percentiles of ULP errors and of error/bound without sorting 2^26 values.
struct log_histogram {
  static constexpr int per_octave = 8, lo_exp = -64, hi_exp = 64;
  static constexpr int bins = (hi_exp - lo_exp) * per_octave + 2;
  std::vector<std::int64_t> counts = std::vector<std::int64_t>(bins, 0);

  // The binade from the exponent bits, the sub-bin from the top 3 mantissa bits: no log2.
  static int bin_of(double v) {
    if (!(v > 0)) return 0;
    // The double just below v: bins are (lo, hi], so an error of exactly 0.5 ULP counts as <= 0.5.
    const auto bits = std::bit_cast<std::uint64_t>(v) - 1;
    const int exponent = static_cast<int>(bits >> 52) - 1023;
    const int sub = static_cast<int>((bits >> 49) & 7u);
    return std::clamp((exponent - lo_exp) * per_octave + sub + 1, 1, bins - 1);
  }
  static double upper_edge(int bin) {
    if (bin == 0) return 0.0;
    if (bin == bins - 1) return inf;
    const int octave = (bin - 1) / per_octave, sub = (bin - 1) % per_octave;
    return std::ldexp(1.0 + (sub + 1.0) / per_octave, octave + lo_exp);
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

// Linear counting (Whang et al. 1990) of distinct rounding positions in a 2^16-bit bitmap.
// A correct kernel's rounding error of an element is decided by where its exact value lies
// between two output grid points: elements at the same position carry the same error, not
// independent ones. Repeated values do; so do distinct values whose positions coincide, as in
// log_softmax's y = x - c of inputs on a coarse grid, where every element of a row and binade
// lies at the same position. But a tie (exactly halfway) rounds by the parity of the value
// below it, which differs from value to value: ties count as distinct values. The bias test's
// sample size is the number of distinct positions, ties apart.
struct distinct_sketch {
  static constexpr int bits = 1 << 16;
  // One extra word absorbs the slot of ineligible elements, so adding needs no branch.
  static constexpr std::int32_t no_slot = bits;
  std::vector<std::uint64_t> words = std::vector<std::uint64_t>(bits / 64 + 1, 0);
  // The fractional part of |x| without std::floor, which GCC vectorizes only under
  // -fno-trapping-math: adding and subtracting 2^52 rounds |x| < 2^52 to an integer.
  static double fraction(double x) {
    const double a = std::fabs(x), nearest = (a + 0x1p52) - 0x1p52, f = a - nearest;
    return a < 0x1p52 ? (f < 0 ? f + 1.0 : f) : 0.0;
  }
  // The position of |ref| / ulp between two grid points, in 2^-16 of an ULP: far coarser than
  // the fp64 reference's own rounding (which would otherwise split one position in two), and x
  // and -x at one position (their errors are the same, sign-relative).
  static std::int32_t position_slot(double ref, double ref_in_ulps) {
    const double f = fraction(ref_in_ulps);
    const std::int32_t position = static_cast<std::int32_t>(f * 65536.0) & 0xffff;
    // A tie by its value (its bits folded with shifts and xors: a multiply is slow in SIMD).
    const std::uint64_t b = std::bit_cast<std::uint64_t>(ref);
    const std::int32_t value = static_cast<std::int32_t>((b ^ (b >> 16) ^ (b >> 32) ^ (b >> 48)) & 0xffffu);
    return f == 0.5 ? value : position;
  }
  void add_slot(std::int32_t slot) { words[slot >> 6] |= 1ull << (slot & 63); }
  void merge(const distinct_sketch& o) {
    for (std::size_t i = 0; i < words.size(); ++i) words[i] |= o.words[i];
  }
  std::int64_t set_bits() const {
    std::int64_t set = 0;
    for (int i = 0; i < bits / 64; ++i) set += std::popcount(words[i]);
    return set;
  }
  double estimate() const {
    const std::int64_t set = set_bits();
    const double empty = static_cast<double>(bits - set) / bits;
    return empty > 0 ? -bits * std::log(empty) : bits * std::log(static_cast<double>(bits));
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
  double max_abs = 0, sum_abs = 0, max_rel = 0, sum_rel = 0, max_ulps = 0, max_over = 0, max_abs_ref = 0;
  double sum_signed = 0, dot = 0, got_sq = 0, ref_sq = 0;
  bool any_nonzero = false, got_constant = true, ref_constant = true;
  std::int64_t bias_n = 0;
  double bias_sr = 0, bias_sr2 = 0, bias_pl = 0, bias_pl2 = 0;
  log_histogram ulp_hist, over_hist;
  std::vector<candidate> worst;
  distinct_sketch distinct;  // distinct reference values among bias-eligible elements
  double admit = -1;  // a key must exceed this to enter `worst` (its minimum once full)

  // Keeps the k worst: by key, equal keys by the lower index, so that which elements are kept
  // does not depend on the order the threads offer them in.
  static bool worse(const candidate& a, const candidate& b) {
    return a.key > b.key || (a.key == b.key && a.linear < b.linear);
  }
  void offer(const candidate& c, int k) {
    if (k <= 0 || c.key < admit) return;
    if (static_cast<int>(worst.size()) < k) {
      worst.push_back(c);
    } else {
      auto least = std::min_element(worst.begin(), worst.end(), [](const candidate& a, const candidate& b) {
        return worse(b, a);
      });
      if (!worse(c, *least)) return;
      *least = c;
    }
    if (static_cast<int>(worst.size()) == k)
      admit = std::min_element(worst.begin(), worst.end(), [](const candidate& a, const candidate& b) {
                return a.key < b.key;
              })->key;
  }
};

// The floating-point sums of a partial, taken per chunk and added in the chunks' order at the
// end: the metrics then do not depend on how many threads shared the chunks (a sharded run on
// nodes with other core counts merges into the same records).
struct chunk_sums {
  double abs = 0, rel = 0, signed_error = 0, dot = 0, got_sq = 0, ref_sq = 0;
  double bias_sr = 0, bias_sr2 = 0, bias_pl = 0, bias_pl2 = 0;
};

chunk_sums take_sums(partial& p) {
  const chunk_sums s{p.sum_abs, p.sum_rel, p.sum_signed, p.dot, p.got_sq, p.ref_sq,
                     p.bias_sr, p.bias_sr2, p.bias_pl, p.bias_pl2};
  p.sum_abs = p.sum_rel = p.sum_signed = p.dot = p.got_sq = p.ref_sq = 0;
  p.bias_sr = p.bias_sr2 = p.bias_pl = p.bias_pl2 = 0;
  return s;
}

void add_sums(partial& p, const chunk_sums& s) {
  p.sum_abs += s.abs, p.sum_rel += s.rel, p.sum_signed += s.signed_error, p.dot += s.dot;
  p.got_sq += s.got_sq, p.ref_sq += s.ref_sq;
  p.bias_sr += s.bias_sr, p.bias_sr2 += s.bias_sr2, p.bias_pl += s.bias_pl, p.bias_pl2 += s.bias_pl2;
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
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const int e = static_cast<int>((bits >> 52) & 0x7ffu) - 1023;  // x is finite here
    if (e < min_exponent) return min_subnormal;
    // 2^(e-p+1) built from its exponent field; never below 2^-1022 for opval's types.
    return std::bit_cast<double>(static_cast<std::uint64_t>(e - precision + 1 + 1023) << 52);
  }
};

// What the expected value looks like once rounded to the output type (overflow to +-inf):
// +-inf only where the exact value, within `bound` of ref (the compute bound, before the output
// rounding), may reach the round-to-nearest overflow threshold max + ulp(max)/2. An exact +-max
// rounds to itself, so a kernel turning it into +-inf (a saturation option ignored) fails.
bool overflow_expected(dtype t, double ref, double bound, double got) {
  if (!std::isinf(got) || std::isnan(ref)) return false;
  if (std::signbit(got) != std::signbit(ref)) return false;
  const double max = traits(t).max;
  return std::fabs(ref) + bound >= max + 0.5 * ulp(t, max);
}


constexpr std::int64_t chunk_size = 1024;
alignas(64) constexpr double zero_chunk[chunk_size] = {};

// Per-element results of the vectorized pass that the scalar pass (histograms, worst k) needs.
struct chunk_out {
  alignas(64) double ulps[chunk_size];
  alignas(64) double key[chunk_size];  // what ranks the worst elements: error/bound, or |error|
  alignas(64) std::int32_t ulp_bin[chunk_size];
  alignas(64) std::int32_t over_bin[chunk_size];
  alignas(64) std::int32_t distinct_slot[chunk_size];  // distinct_sketch::no_slot when not bias-eligible
  double max_key = 0;
};

// log_histogram::bin_of without branches, for the vectorized pass.
inline std::int32_t histogram_bin(double v) {
  // Subtracted as unsigned: for v = -0.0 the signed form would be INT64_MIN - 1 (UB, found by
  // UBSan); the result is not used for v <= 0 and is the same for every v > 0.
  const std::int64_t bits = static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(v) - 1);
  const std::int64_t exponent = ((bits >> 52) & 0x7ff) - 1023;
  const std::int64_t sub = (bits >> 49) & 7;
  const std::int64_t bin = std::clamp<std::int64_t>((exponent - log_histogram::lo_exp) * log_histogram::per_octave + sub + 1,
                                                    1, log_histogram::bins - 1);
  return v > 0 ? static_cast<std::int32_t>(bin) : 0;
}

// Read-only views of one comparison's data and the output type's ULP parameters.
struct element_view {
  const float* got_f32;
  const double* got_f64;
  const double* ref;
  const double* bound;
  const double* compute;
  ulp_of ulp;  // of the output type
  double got0, ref0, bound0;
  double bias_floor;  // |ref| below it: not in the bias test
  const double* contract;  // compare_input::contract_values, or null
  double max;              // the output type's largest finite value

  double got(std::int64_t i) const { return got_f32 ? static_cast<double>(got_f32[i]) : got_f64[i]; }
  double bound_at(std::int64_t i) const { return bound ? bound[i] : 0.0; }
};


// The common case, written so the compiler vectorizes it: every value finite. ULPs come from
// exponent bits, so the only divisions are the relative error and error/bound.
[[gnu::always_inline]] inline bool finite_chunk_body(const element_view& v, std::int64_t begin, std::int64_t end, partial& p,
                  chunk_out& out) {
  // Widen `got` first: a per-element choice of its type would keep the main loop scalar.
  double got_buf[chunk_size];
  const double* got = v.got_f64 ? v.got_f64 + begin : got_buf;
  // Absent bounds read as zeros, so the loop has no conditional loads (which stop vectorizing).
  const double* bnd = v.bound ? v.bound + begin : zero_chunk;
  const double* cmp = v.compute ? v.compute + begin : zero_chunk;
  const double* ref = v.ref + begin;
  // Integers have a ULP of 1: clamp the exponent to a constant so no branch is needed.
  const std::int64_t exponent_ceiling = v.ulp.is_float ? 4096 : 0;
  if (!v.got_f64)
    for (std::int64_t i = begin; i < end; ++i) got_buf[i - begin] = static_cast<double>(v.got_f32[i]);
  double sum_abs = 0, max_abs = 0, sum_rel = 0, max_rel = 0, max_ulps = 0, max_over = 0, max_abs_ref = 0;
  double sum_signed = 0, dot = 0, got_sq = 0, ref_sq = 0;
  double bias_n = 0, bias_sr = 0, bias_sr2 = 0, bias_pl = 0, bias_pl2 = 0;
  // Counts as doubles (exact below 2^53): mixing integer and double lanes defeats vectorization.
  double probe = 0, max_key = 0;
  double beyond = 0, significant = 0, neg_zero = 0, nonzero = 0, got_varies = 0, ref_varies = 0;
  const std::int64_t exponent_floor = v.ulp.min_exponent;
  const std::int64_t shift = v.ulp.is_float ? v.ulp.precision - 1 : 0;
  // Reassociating these sums is what vectorizes them; the results differ only in rounding.
#pragma omp simd reduction(+ : sum_abs, sum_rel, sum_signed, dot, got_sq, ref_sq, bias_n, bias_sr, bias_sr2, \
                               bias_pl, bias_pl2, beyond, significant, neg_zero, nonzero, got_varies, ref_varies, probe) \
    reduction(max : max_abs, max_rel, max_ulps, max_over, max_key, max_abs_ref)
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t k = i - begin;
    const double g = got[k], r = ref[k], b = bnd[k];
    const double e = g - r, a = std::fabs(e), ar = std::fabs(r);
    std::int64_t ex = static_cast<std::int64_t>((std::bit_cast<std::uint64_t>(r) >> 52) & 0x7ff) - 1023;
    ex = std::min(std::max(ex, exponent_floor), exponent_ceiling) - shift;
    const double u = std::bit_cast<double>(static_cast<std::uint64_t>(ex + 1023) << 52);
    const double inv_u = std::bit_cast<double>(static_cast<std::uint64_t>(1023 - ex) << 52);
    const double ulps = a * inv_u;
    const double rel = ar > 0 ? a / ar : 0.0;
    const double over = b > 0 ? a / b : (a > 0 ? inf : 0.0);
    out.ulps[k] = ulps;
    out.key[k] = v.bound ? over : a;
    max_key = std::max(max_key, out.key[k]);
    out.ulp_bin[k] = histogram_bin(ulps);
    out.over_bin[k] = histogram_bin(over);
    sum_abs += a, max_abs = std::max(max_abs, a);
    sum_rel += rel, max_rel = std::max(max_rel, rel);
    max_ulps = std::max(max_ulps, ulps), max_over = std::max(max_over, over);
    sum_signed += e, dot += g * r, got_sq += g * g, ref_sq += r * r;
    beyond += a > b ? 1.0 : 0.0;
    significant += ar > b ? 1.0 : 0.0;
    max_abs_ref = std::max(max_abs_ref, ar);
    const bool signs_differ = (std::bit_cast<std::int64_t>(g) ^ std::bit_cast<std::int64_t>(r)) < 0;
    neg_zero += (g == 0.0 && r == 0.0 && signs_differ) ? 1.0 : 0.0;
    probe += g * 0.0 + r * 0.0;  // NaN once any value is NaN or infinite
    nonzero += g != 0.0 ? 1.0 : 0.0;
    got_varies += g != v.got0 ? 1.0 : 0.0;
    ref_varies += std::fabs(r - v.ref0) <= b + v.bound0 ? 0.0 : 1.0;
    const bool eligible = ar > 0 && ar >= v.bias_floor && cmp[k] < 0.25 * u;
    out.distinct_slot[k] = eligible ? distinct_sketch::position_slot(r, r * inv_u) : distinct_sketch::no_slot;
    const double s = eligible ? e * inv_u : 0.0;
    const double sr = r < 0 ? -s : s;
    bias_n += eligible ? 1.0 : 0.0;
    bias_sr += sr, bias_sr2 += sr * sr, bias_pl += s, bias_pl2 += s * s;
  }
  // Non-finite values need the classifying path; nothing of this pass is kept.
  if (probe != 0.0) return false;
  out.max_key = max_key;
  const std::int64_t len = end - begin;
  p.count += len, p.finite += len, p.beyond += v.bound ? beyond : 0;
  p.ref_significant += significant, p.neg_zero += neg_zero;
  p.sum_abs += sum_abs, p.max_abs = std::max(p.max_abs, max_abs);
  p.sum_rel += sum_rel, p.max_rel = std::max(p.max_rel, max_rel);
  p.max_ulps = std::max(p.max_ulps, max_ulps);
  p.max_abs_ref = std::max(p.max_abs_ref, max_abs_ref);
  if (v.bound) p.max_over = std::max(p.max_over, max_over);
  p.sum_signed += sum_signed, p.dot += dot, p.got_sq += got_sq, p.ref_sq += ref_sq;
  p.any_nonzero |= nonzero > 0;
  p.got_constant &= got_varies == 0;
  p.ref_constant &= ref_varies == 0;
  p.bias_n += static_cast<std::int64_t>(bias_n);
  p.bias_sr += bias_sr, p.bias_sr2 += bias_sr2, p.bias_pl += bias_pl, p.bias_pl2 += bias_pl2;
  return true;
}

// The body compiled for AVX-512 (with the 64-bit integer lanes of DQ) and for the baseline;
// one is chosen at run time.
__attribute__((target("avx512f,avx512dq,avx512vl"))) bool finite_chunk_avx512(
    const element_view& v, std::int64_t begin, std::int64_t end, partial& p, chunk_out& out) {
  return finite_chunk_body(v, begin, end, p, out);
}
__attribute__((target("avx2,fma"))) bool finite_chunk_avx2(
    const element_view& v, std::int64_t begin, std::int64_t end, partial& p, chunk_out& out) {
  return finite_chunk_body(v, begin, end, p, out);
}
bool finite_chunk_baseline(const element_view& v, std::int64_t begin, std::int64_t end, partial& p,
                           chunk_out& out) {
  return finite_chunk_body(v, begin, end, p, out);
}
using finite_chunk_fn = bool (*)(const element_view&, std::int64_t, std::int64_t, partial&, chunk_out&);
finite_chunk_fn select_finite_chunk() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return finite_chunk_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return finite_chunk_avx2;
  return finite_chunk_baseline;
}
const finite_chunk_fn finite_chunk = select_finite_chunk();

// Whether g is what the contract's own roundings give at i where they change a special value
// (compare_input::contract_values): the same NaN or infinity, or the largest finite value an
// exact result r beyond it saturates at.
bool contract_gives(const element_view& v, std::int64_t i, double g, double r) {
  const double c = v.contract[i];
  if (std::isnan(c)) return std::isnan(g);
  if (std::isinf(c)) return g == c;
  return g == c && std::fabs(c) == v.max && std::fabs(r) > v.max;
}

// |error| / bound; any error is infinitely over a zero bound.
double ratio_to_bound(double abs_err, double b) { return b > 0 ? abs_err / b : (abs_err > 0 ? inf : 0.0); }

// What an element is to the comparison: a special value that agrees (an exact match: the
// histograms' zero bins), a NaN or Inf mismatch (an infinite error), or a finite pair.
enum class element_class { exact_special, nan_mismatch, inf_mismatch, finite };

element_class classify(const element_view& v, const compare_input& in, std::int64_t i, double g, double r, double b) {
  if (v.contract && contract_gives(v, i, g, r)) return element_class::exact_special;
  if (std::isnan(g) || std::isnan(r))
    return std::isnan(g) && std::isnan(r) ? element_class::exact_special : element_class::nan_mismatch;
  if (std::isinf(g) || std::isinf(r)) {
    if (g == r || overflow_expected(in.ulp_type, r, v.compute ? v.compute[i] : b, g)) return element_class::exact_special;
    return element_class::inf_mismatch;
  }
  return element_class::finite;
}

// |error| / bound of one element, as the comparison counts it: 0 for an agreeing special value,
// infinite for a mismatch, and for any error where the bound is 0.
double error_over_bound(const element_view& v, const compare_input& in, std::int64_t i) {
  const double g = v.got(i), r = v.ref[i], b = v.bound_at(i);
  switch (classify(v, in, i, g, r, b)) {
    case element_class::exact_special: return 0.0;
    case element_class::nan_mismatch:
    case element_class::inf_mismatch: return inf;
    case element_class::finite: break;
  }
  return ratio_to_bound(std::fabs(g - r), b);
}

// Any element, NaN and infinities included: the classification path.
void general_element(const element_view& v, const compare_input& in, std::int64_t i, partial& p) {
  const double g = v.got(i), r = v.ref[i], b = v.bound_at(i);
  ++p.count;
  if (g != 0.0) p.any_nonzero = true;
  if (!(g == v.got0 || (std::isnan(g) && std::isnan(v.got0)))) p.got_constant = false;
  // r == ref0 first: two equal infinities differ by NaN.
  if (!(r == v.ref0 || std::fabs(r - v.ref0) <= b + v.bound0 || (std::isnan(r) && std::isnan(v.ref0))))
    p.ref_constant = false;
  if (std::fabs(r) > b) ++p.ref_significant;
  double abs_err, ulps;
  const element_class kind = classify(v, in, i, g, r, b);
  if (kind == element_class::exact_special) {
    p.ulp_hist.add(0.0);
    if (v.bound) p.over_hist.add(0.0);
    return;
  }
  if (kind == element_class::nan_mismatch) {
    ++p.nan_mismatch;
    abs_err = inf, ulps = inf;
  } else if (kind == element_class::inf_mismatch) {
    ++p.inf_mismatch;
    abs_err = inf, ulps = inf;
  } else {
    if (g == 0.0 && r == 0.0 && std::signbit(g) != std::signbit(r)) ++p.neg_zero;
    const double e = g - r;
    abs_err = std::fabs(e);
    const double u = v.ulp(r);
    ulps = abs_err / u;
    ++p.finite;
    p.sum_abs += abs_err;
    p.max_abs = std::max(p.max_abs, abs_err);
    p.max_abs_ref = std::max(p.max_abs_ref, std::fabs(r));
    if (r != 0.0) {
      double rel = abs_err / std::fabs(r);
      p.sum_rel += rel;
      p.max_rel = std::max(p.max_rel, rel);
    }
    p.sum_signed += e;
    p.dot += g * r, p.got_sq += g * g, p.ref_sq += r * r;
    if (r != 0.0 && std::fabs(r) >= v.bias_floor && (!v.compute || v.compute[i] < 0.25 * u)) {
      p.distinct.add_slot(distinct_sketch::position_slot(r, r / u));
      const double s = e / u;
      const double sr = std::signbit(r) ? -s : s;
      ++p.bias_n;
      p.bias_sr += sr, p.bias_sr2 += sr * sr, p.bias_pl += s, p.bias_pl2 += s * s;
    }
  }
  p.max_ulps = std::max(p.max_ulps, ulps);
  p.ulp_hist.add(ulps);
  double over = 0;
  if (v.bound) {
    // A NaN or Inf mismatch is infinitely over, even where the bound is infinite itself.
    over = std::isinf(abs_err) ? inf : ratio_to_bound(abs_err, b);
    p.over_hist.add(over);
    p.max_over = std::max(p.max_over, over);
    if (abs_err > b) ++p.beyond;
  }
  const double key = v.bound ? over : abs_err;
  if (key >= p.admit) p.offer({key, i, r, g, b, abs_err, ulps}, in.worst_k);
}

// The report's coarse ULP bins, (edge_{k-1}, edge_k], summed from the fine histogram.
std::vector<std::int64_t> coarse_histogram(const log_histogram& fine) {
  std::vector<std::int64_t> coarse(ulp_bins, 0);
  for (int bin = 0; bin < log_histogram::bins; ++bin) {
    const double upper = log_histogram::upper_edge(bin);
    int k = 0;
    while (k < ulp_bins - 1 && upper > ulp_bin_edges[k]) ++k;
    coarse[k] += fine.counts[bin];
  }
  return coarse;
}

// A comparison's tensors as contiguous doubles (f32 `got` read in place), and the view of them
// every pass reads. Not movable: the view points into the buffers.
class compared_data {
 public:
  explicit compared_data(const compare_input& in) {
    const tensor& got_t = *in.got;
    n = got_t.numel();
    const float* got_f32 = (storage_type(got_t.type()) == dtype::f32 && got_t.is_contiguous())
                               ? got_t.data_as<float>() : nullptr;
    const double* got_f64 = got_f32 ? nullptr : contiguous_f64(&got_t, got_buffer_);
    const double* ref = contiguous_f64(in.expected, ref_buffer_);
    const double* bound = contiguous_f64(in.bound, bound_buffer_);
    const double got0 = n ? (got_f32 ? got_f32[0] : got_f64[0]) : 0.0;
    const double ref0 = n ? ref[0] : 0.0;
    const double bound0 = (n && bound) ? bound[0] : 0.0;
    const double max = is_float(in.ulp_type) ? traits(in.ulp_type).max : inf;
    view.emplace(element_view{got_f32, got_f64, ref, bound, contiguous_f64(in.compute_bound, compute_buffer_),
                              ulp_of(in.ulp_type), got0, ref0, bound0, in.bias_floor,
                              contiguous_f64(in.contract_values, contract_buffer_), max});
  }
  compared_data(const compared_data&) = delete;
  compared_data& operator=(const compared_data&) = delete;

  std::int64_t n = 0;
  std::optional<element_view> view;

 private:
  static const double* contiguous_f64(const tensor* t, std::vector<double>& buffer) {
    if (!t || t->empty()) return nullptr;
    if (t->type() == dtype::f64 && t->is_contiguous()) return t->data_as<double>();
    buffer = t->to_vector();
    return buffer.data();
  }
  std::vector<double> got_buffer_, ref_buffer_, bound_buffer_, compute_buffer_, contract_buffer_;
};

}  // namespace

metrics compare_outputs(const compare_input& in) {
  const tensor& got_t = *in.got;
  const compared_data data(in);
  const std::int64_t n = data.n;
  const element_view& view = *data.view;
  const double* ref = view.ref;
  const double* bound = view.bound;
  const double* contract = view.contract;

  std::vector<partial> partials(omp_get_max_threads());
  std::vector<chunk_sums> sums(static_cast<std::size_t>((n + chunk_size - 1) / chunk_size));
  // Threads only pay off past a few chunks; tiny outputs stay on the calling thread.
  const bool parallel = n > 8 * chunk_size;
#pragma omp parallel if (parallel)
  {
    partial& p = partials[omp_get_thread_num()];
    auto out = std::make_unique<chunk_out>();
    // Two copies of each histogram, alternating, so runs of equal bins do not serialize.
    log_histogram ulp_odd, over_odd;
#pragma omp for schedule(static)
    for (std::int64_t begin = 0; begin < n; begin += chunk_size) {
      const std::int64_t end = std::min(n, begin + chunk_size);
      // With the contract's values every element takes the classifying path: a saturated
      // finite result is matched there too.
      if (!contract && finite_chunk(view, begin, end, p, *out)) {
        const std::int64_t len = end - begin;
        std::int64_t* ulp_even = p.ulp_hist.counts.data();
        std::int64_t* ulp_odd_counts = ulp_odd.counts.data();
        for (std::int64_t k = 0; k + 1 < len; k += 2) ++ulp_even[out->ulp_bin[k]], ++ulp_odd_counts[out->ulp_bin[k + 1]];
        if (len % 2) ++ulp_even[out->ulp_bin[len - 1]];
        if (bound) {
          std::int64_t* over_even = p.over_hist.counts.data();
          std::int64_t* over_odd_counts = over_odd.counts.data();
          for (std::int64_t k = 0; k + 1 < len; k += 2) ++over_even[out->over_bin[k]], ++over_odd_counts[out->over_bin[k + 1]];
          if (len % 2) ++over_even[out->over_bin[len - 1]];
        }
        // Every chunk, whatever the threads: a sketch that stopped early would depend on which
        // chunks a thread had seen, and so on the thread count.
        for (std::int64_t k = 0; k < len; ++k) p.distinct.add_slot(out->distinct_slot[k]);
        for (std::int64_t k = 0; k < len && out->max_key >= p.admit; ++k) {
          if (out->key[k] < p.admit) continue;
          const std::int64_t i = begin + k;
          const double g = view.got(i);
          p.offer({out->key[k], i, ref[i], g, view.bound_at(i), std::fabs(g - ref[i]), out->ulps[k]}, in.worst_k);
        }
      } else {
        for (std::int64_t i = begin; i < end; ++i) general_element(view, in, i, p);
      }
      sums[static_cast<std::size_t>(begin / chunk_size)] = take_sums(p);
    }
    p.ulp_hist.merge(ulp_odd);
    p.over_hist.merge(over_odd);
  }

  partial total;
  for (const chunk_sums& c : sums) add_sums(total, c);  // the partials' own sums are all taken
  for (auto& p : partials) {
    total.count += p.count, total.finite += p.finite, total.beyond += p.beyond;
    total.nan_mismatch += p.nan_mismatch, total.inf_mismatch += p.inf_mismatch, total.neg_zero += p.neg_zero;
    total.ref_significant += p.ref_significant;
    total.max_abs = std::max(total.max_abs, p.max_abs);
    total.max_rel = std::max(total.max_rel, p.max_rel);
    total.max_ulps = std::max(total.max_ulps, p.max_ulps), total.max_over = std::max(total.max_over, p.max_over);
    total.max_abs_ref = std::max(total.max_abs_ref, p.max_abs_ref);
    total.any_nonzero |= p.any_nonzero;
    total.got_constant &= p.got_constant, total.ref_constant &= p.ref_constant;
    total.bias_n += p.bias_n;
    total.ulp_hist.merge(p.ulp_hist), total.over_hist.merge(p.over_hist);
    total.distinct.merge(p.distinct);
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
  // In ULPs of the output's scale: an error near zero counts at the size of the largest values.
  m.max_scaled_ulps = total.nan_mismatch + total.inf_mismatch > 0 ? inf : total.max_abs / view.ulp(total.max_abs_ref);
  m.p50_ulps = total.ulp_hist.quantile(0.5, judged, total.max_ulps);
  m.p99_ulps = total.ulp_hist.quantile(0.99, judged, total.max_ulps);
  m.ulp_histogram = coarse_histogram(total.ulp_hist);
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
  // Elements at one rounding position repeat one rounding error: the effective sample size is
  // the number of distinct positions (a conservative cluster correction of the z-test).
  bias.distinct = std::min(nb, total.distinct.estimate());
  const double n_eff = std::max(bias.distinct, 1.0);
  // Enough samples to see a 0.1-ULP offset at the z threshold with a rounding-error spread of
  // about 0.3 ULP: n >= (z * 0.3 / 0.1)^2.
  const double needed = std::pow(in.bias_z * 0.3 / in.bias_min_ulps, 2.0);
  bias.has_power = in.bias_test && n_eff >= needed;
  if (total.bias_n > 1) {
    auto z_of = [&](double sum, double sum_sq) {
      double mean = sum / nb;
      double var = std::max(sum_sq / nb - mean * mean, 0.0) * nb / (nb - 1.0);
      double se = std::sqrt(var / n_eff);
      return std::pair{mean, se > 0 ? mean / se : (mean == 0 ? 0.0 : std::copysign(inf, mean))};
    };
    std::tie(bias.sign_relative_mean, bias.sign_relative_z) = z_of(total.bias_sr, total.bias_sr2);
    std::tie(bias.plain_mean, bias.plain_z) = z_of(total.bias_pl, total.bias_pl2);
  }
  if (!in.bias_test) {
    bias.note = "not applied: " + in.bias_skip_reason;
  } else if (!bias.has_power) {
    bias.note = fmt::format("too few rounding-dominated elements ({} elements, about {:.0f} distinct rounding positions < {:.0f}) "
                            "for the bias test to have power", total.bias_n, bias.distinct, std::ceil(needed));
  } else {
    auto is_biased = [&](double mean, double z) {
      return std::fabs(mean) >= in.bias_min_ulps && std::fabs(z) >= in.bias_z;
    };
    bias.biased = is_biased(bias.sign_relative_mean, bias.sign_relative_z) ||
                  is_biased(bias.plain_mean, bias.plain_z);
    bias.note = fmt::format("sign-relative mean {:+.3f} ULP (z={:+.1f}), plain mean {:+.3f} ULP (z={:+.1f}) over {} "
                            "elements (about {:.0f} distinct rounding positions)", bias.sign_relative_mean, bias.sign_relative_z,
                            bias.plain_mean, bias.plain_z, total.bias_n, bias.distinct);
  }

  std::sort(total.worst.begin(), total.worst.end(), partial::worse);
  for (const auto& c : total.worst)
    m.worst.push_back({got_t.unravel(c.linear), c.expected, c.got, c.bound, c.abs_error, c.ulps});
  return m;
}

error_tiles tile_errors(const compare_input& in) {
  const compared_data data(in);
  error_tiles t;
  if (data.n == 0) return t;
  const dims& shape = in.got->shape();
  t.cols = shape.empty() ? 1 : shape.back();
  t.rows = data.n / t.cols;
  constexpr std::int64_t side = error_tiles::max_tiles;
  t.tile_rows = (t.rows + side - 1) / side, t.tile_cols = (t.cols + side - 1) / side;
  const std::int64_t grid_rows = (t.rows + t.tile_rows - 1) / t.tile_rows;
  const std::int64_t grid_cols = (t.cols + t.tile_cols - 1) / t.tile_cols;
  t.max_error_over_bound.assign(static_cast<std::size_t>(grid_rows), std::vector<double>(grid_cols, 0.0));
  // One tile row per iteration, each written by one thread: a maximum does not depend on the
  // order its elements come in, so neither does any tile on the thread count.
#pragma omp parallel for schedule(static) if (data.n > 8 * chunk_size)
  for (std::int64_t tr = 0; tr < grid_rows; ++tr) {
    std::vector<double>& tiles = t.max_error_over_bound[static_cast<std::size_t>(tr)];
    for (std::int64_t row = tr * t.tile_rows; row < std::min(t.rows, (tr + 1) * t.tile_rows); ++row)
      for (std::int64_t col = 0; col < t.cols; ++col) {
        double& tile = tiles[static_cast<std::size_t>(col / t.tile_cols)];
        tile = std::max(tile, error_over_bound(*data.view, in, row * t.cols + col));
      }
  }
  return t;
}

}  // namespace opval
