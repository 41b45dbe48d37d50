#include "ops/common_gemm/gemm_core.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "ops/common_block/block_scaling.hpp"
#include "ops/common_gemm/block_scaled_operands.hpp"
#include "opval/error.hpp"
#include "core/fill.hpp"

namespace opval::ops::common_gemm {
namespace {

// Spelled in full so the list does not depend on shorthand rules; canonicalized on use.
constexpr const char* contract_texts[] = {
    "f32:f32:f32",      "f32@tf32:f32:f32", "f32@bf16:f32:f32",       "f16:f32:f16",
    "f16:f32:f32",      "f16:f16:f16",      "bf16:f32:bf16",          "bf16:f32:f32",
    "f64:f64:f64",      "f8_e4m3:f32:bf16", "f8_e4m3:f32:f16",        "f8_e4m3:f32:f32",
    "f8_e5m2:f32:bf16", "f8_e5m2:f32:f32",  "f8_e4m3xf8_e5m2:f32:bf16", "u8xi8:i32:f32",
    "i8xi8:i32:f32",    "u8xi8:i32:bf16",   "u8xi8:i32:i8",           "u8xi8:i32:u8",
    "i8xi8:i32:i8",     "u8xi8:i32:i32",    "i8xi8:i32:i32"};

// The block-scaled contracts listed (is_block_scaled_contract accepts every element pair).
constexpr const char* block_contract_texts[] = {
    "f8_e4m3:f32:f32", "f8_e4m3:f32:bf16", "f8_e5m2:f32:f32", "f8_e5m2:f32:bf16", "f8_e4m3xf8_e5m2:f32:f32",
    "f6_e2m3:f32:f32", "f6_e2m3:f32:bf16", "f6_e3m2:f32:f32", "f6_e3m2:f32:bf16", "f4_e2m1:f32:f32",
    "f4_e2m1:f32:bf16", "f4_e2m1:f32:f16"};

bool same_types(const contract& x, const contract& y) {
  return x.src == y.src && x.wei == y.wei && x.math == y.math && x.acc == y.acc && x.dst == y.dst;
}

bool is_pow2(double x) {
  int e = 0;
  return x != 0 && std::isfinite(x) && std::abs(std::frexp(x, &e)) == 0.5;
}

// Rows go to threads only when there is enough work; each output's summation order is the
// same either way, so results do not depend on the thread count.
bool worth_threads(std::int64_t m, std::int64_t n, std::int64_t k) { return m > 1 && m * n * k > (1 << 20); }

// The accumulation of the sim backend for f32 and f64 accumulation: sequential fma in T over
// k for each output, vectorized across j (each output's order is unchanged, so the result is
// exact). Always inlined, so that each target clone below compiles it for its own ISA.
template <class T>
[[gnu::always_inline]] inline void dot_fma(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, const T* b,
                                           T* c) {
#pragma omp parallel for schedule(static) if (worth_threads(m, n, k))
  for (std::int64_t i = 0; i < m; ++i) {
    T* ci = c + i * n;
    std::fill(ci, ci + n, T(0));
    for (std::int64_t p = 0; p < k; ++p) {
      const T av = a[i * k + p];
      const T* bp = b + p * n;
      for (std::int64_t j = 0; j < n; ++j) ci[j] = std::fma(av, bp[j], ci[j]);
    }
  }
}

__attribute__((target_clones("arch=x86-64-v3", "default")))
void dot_f32(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c) {
  dot_fma(m, n, k, a, b, c);
}

__attribute__((target_clones("arch=x86-64-v3", "default")))
void dot_f64(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b, double* c) {
  dot_fma(m, n, k, a, b, c);
}

// i32 accumulation of (a - zp_a)(b - zp_b), wrapping as the hardware does.
void dot_int(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const double> a,
             std::span<const double> b, std::int64_t zp_a, std::int64_t zp_b, std::span<double> acc) {
  std::vector<std::int32_t> ai(a.size()), bi(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ai[i] = static_cast<std::int32_t>(a[i]) - static_cast<std::int32_t>(zp_a);
  for (std::size_t i = 0; i < b.size(); ++i) bi[i] = static_cast<std::int32_t>(b[i]) - static_cast<std::int32_t>(zp_b);
#pragma omp parallel for schedule(static) if (worth_threads(m, n, k))
  for (std::int64_t i = 0; i < m; ++i) {
    std::vector<std::int32_t> row(n, 0);
    for (std::int64_t p = 0; p < k; ++p) {
      const std::uint32_t av = static_cast<std::uint32_t>(ai[i * k + p]);
      const std::int32_t* bp = bi.data() + p * n;
      for (std::int64_t j = 0; j < n; ++j)
        row[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(row[j]) + av * static_cast<std::uint32_t>(bp[j]));
    }
    for (std::int64_t j = 0; j < n; ++j) acc[i * n + j] = row[j];
  }
}

// Any other accumulation (f16 or bf16 accumulators, round-toward-zero, flush-to-zero):
// one contract_arith fma per term, same order.
void dot_generic(const contract_arith& ar, std::int64_t m, std::int64_t n, std::int64_t k,
                 std::span<const double> a, std::span<const double> b, std::span<double> acc) {
#pragma omp parallel for schedule(static) if (worth_threads(m, n, k))
  for (std::int64_t i = 0; i < m; ++i) {
    double* ci = acc.data() + i * n;
    std::fill(ci, ci + n, 0.0);
    for (std::int64_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      const double* bp = b.data() + p * n;
      for (std::int64_t j = 0; j < n; ++j) ci[j] = ar.fma(av, bp[j], ci[j]);
    }
  }
}

// The root mean square of the finite values value(i) - zp, i < n: summed per chunk of 4096 and
// then over the chunks in order, so that any thread count gives the same bits.
template <class Value>
double chunked_rms(std::int64_t n, std::int64_t zp, Value value) {
  constexpr std::int64_t chunk = 4096;
  std::vector<double> sums(std::size_t((n + chunk - 1) / chunk), 0.0);
#pragma omp parallel for schedule(static) if (n > 4 * chunk)
  for (std::int64_t c = 0; c < std::int64_t(sums.size()); ++c) {
    double s = 0;
    for (std::int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
      const double x = value(i) - double(zp);
      s += std::isfinite(x) ? x * x : 0.0;
    }
    sums[std::size_t(c)] = s;
  }
  double s = 0;
  for (const double part : sums) s += part;
  return n == 0 ? 0.0 : std::sqrt(s / double(n));
}

// The RMS of a GEMM operand's stored values less its zero point, read in place when it is a
// contiguous f32 tensor (no copy of a large operand).
double centered_rms(const tensor& t, std::int64_t zp) {
  if (t.is_contiguous() && t.type() == dtype::f32) {
    const float* data = t.data_as<float>();
    return chunked_rms(t.numel(), zp, [data](std::int64_t i) { return double(data[i]); });
  }
  const std::vector<double> v = t.to_vector();
  return chunked_rms(std::int64_t(v.size()), zp, [&v](std::int64_t i) { return v[std::size_t(i)]; });
}

// Parameters of the A/B fill of kind `kind` for storage type t.
fill_params input_params(fill_kind kind, dtype t, int range, const contract& c, std::int64_t k) {
  fill_params fp;
  fp.kind = kind;
  const auto& tr = traits(t);
  if (!tr.is_float) {
    fp.scale = 32;
    if (kind == fill_kind::uniform || kind == fill_kind::large) {
      fp.kind = fill_kind::uniform;
      fp.lo = tr.lowest - 0.49;  // every integer of the type equally likely
      fp.hi = tr.max + 0.49;
    }
    if (kind == fill_kind::positive) fp.scale = 64;
    if (kind == fill_kind::wide) fp.wide_exponents = 12;
  } else {
    const double acc_max = traits(epilogue_type(c)).max;
    if (kind == fill_kind::large) {
      fp.kind = fill_kind::uniform;
      const double l = std::min(1e3, std::sqrt(acc_max / double(k + 1)) / 4);
      fp.lo = -l;
      fp.hi = l;
    }
    // Keep products and their sums finite in narrow accumulators (f16: 65504).
    if (kind == fill_kind::wide && acc_max < 1e5) fp.wide_exponents = 8;
  }
  fp.exact_range = range;
  return fp;
}

// Parameters of an auxiliary (C, bias, residual) fill of magnitude `mag`.
fill_params aux_params(fill_kind kind, double mag, int range) {
  fill_params fp;
  fp.exact_range = range;
  switch (kind) {
    case fill_kind::exact: fp.kind = fill_kind::exact; break;
    case fill_kind::positive: fp.kind = fill_kind::positive; fp.scale = mag; break;
    case fill_kind::uniform:
    case fill_kind::large: fp.kind = fill_kind::uniform; fp.lo = -mag; fp.hi = mag; break;
    default: fp.kind = fill_kind::normal; fp.scale = mag; break;
  }
  return fp;
}

// The largest r <= 4 for which integer inputs in [-r, r] make every epilogue step exact in
// the epilogue type (0 when none does): all values are multiples of the smallest unit in
// play and stay below 2^p units.
int exact_range(const epilogue_spec& e, const contract& c, std::int64_t k) {
  const double fmax = std::abs(e.alpha * e.scale_a * e.scale_b) * (e.per_channel ? 2 : 1);
  const double fmin = std::abs(e.alpha * e.scale_a * e.scale_b) / (e.per_channel ? 2 : 1);
  double unit = std::min(fmin, 1.0);
  if (e.beta != 0) unit = std::min(unit, std::abs(e.beta));
  const double limit = std::ldexp(1.0, traits(epilogue_type(c)).precision);
  for (int r = 4; r >= 1; --r) {
    const double ra = r + std::abs(double(e.zp_a)), rb = r + std::abs(double(e.zp_b));
    const double mag = fmax * double(k) * ra * rb + std::abs(e.beta) * r + 2.0 * r;
    bool ok = mag / unit <= limit;
    if (e.integer_dst) {
      const double u2 = std::min(unit / std::abs(e.scale_dst), e.zp_dst != 0 ? 1.0 : 1e300);
      ok = ok && (mag / std::abs(e.scale_dst) + std::abs(double(e.zp_dst))) / u2 <= limit;
    }
    if (ok) return r;
  }
  return 0;
}

bool exact_allowed(const epilogue_spec& e) {
  const bool act_ok = e.act == activation::none || e.act == activation::relu;
  return act_ok && is_pow2(e.alpha) && (e.beta == 0 || is_pow2(e.beta)) && is_pow2(e.scale_a) &&
         is_pow2(e.scale_b) && is_pow2(e.scale_dst);
}

}  // namespace

std::vector<std::string> gemm_contracts() {
  std::vector<std::string> out;
  for (const char* t : contract_texts) out.push_back(parse_contract_types(t).types_string());
  return out;
}

void check_contract(std::string_view op, const contract& c) {
  std::string known;
  for (const char* t : contract_texts) {
    if (same_types(parse_contract_types(t), c)) return;
    if (!known.empty()) known += ' ';
    known += parse_contract_types(t).types_string();
  }
  throw error(std::string(op) + " does not support contract dt=" + c.types_string() + " (supported: " + known + ")");
}

std::vector<std::string> block_scaled_contracts() {
  std::vector<std::string> out;
  for (const char* t : block_contract_texts) out.push_back(parse_contract_types(t).types_string());
  return out;
}

bool is_block_scaled_contract(const contract& c) {
  using common_block::is_block_element;
  const bool dst = c.dst == dtype::f32 || c.dst == dtype::bf16 || c.dst == dtype::f16;
  return is_block_element(c.src) && is_block_element(c.wei) && !c.rounds_inputs() && c.acc == dtype::f32 && dst;
}

bool requires_block(const contract& c) {
  const auto f8 = [](dtype t) { return t == dtype::f8_e4m3 || t == dtype::f8_e5m2; };
  return is_block_scaled_contract(c) && !(f8(c.src) && f8(c.wei));
}

void check_block_scaling(const problem& p, const epilogue_spec& e, std::int64_t k) {
  if (e.block == 0) {
    if (requires_block(p.dt))
      throw error(fmt::format("dt={} is a block-scaled contract: it needs block=32 (OCP MX, block_scale=f8_e8m0) "
                              "or block=16 block_scale=f8_e4m3 (NVFP4)",
                              p.dt.types_string()));
    if (e.block_scale != dtype::f8_e8m0) throw error("block_scale=f8_e4m3 needs block > 0 (e.g. block=16)");
    return;
  }
  if (!is_block_scaled_contract(p.dt))
    throw error(fmt::format("block={} needs a block-scaled contract (A and B of f8_e4m3 f8_e5m2 f6_e2m3 f6_e3m2 "
                            "f4_e2m1, acc f32, dst f32, bf16 or f16; e.g. dt=f4_e2m1:f32:f32), not dt={}",
                            e.block, p.dt.types_string()));
  if (k % e.block != 0) throw error(fmt::format("block={} must divide k={}", e.block, k));
}

dtype aux_type(const contract& c) { return is_float(c.dst) ? c.dst : dtype::f32; }

std::vector<double> centered(std::vector<double> values, std::int64_t zp) {
  if (zp != 0)
    for (double& v : values) v -= static_cast<double>(zp);
  return values;
}

fill_traits fill_gemm(const problem& p, const epilogue_spec& e, std::int64_t k,
                      std::span<const operand_role> roles, std::uint64_t seed, std::span<tensor> in) {
  const fill_kind kind = p.fill == "default" ? (e.integer_acc ? fill_kind::uniform : fill_kind::normal)
                                             : parse_fill_kind(p.fill);
  const int r_exact = kind == fill_kind::exact && exact_allowed(e) && e.block == 0 ? exact_range(e, p.dt, k) : 0;
  const int range = std::max(r_exact, 1);
  fill_traits f;
  f.exact = r_exact > 0;
  f.same_sign = kind == fill_kind::positive && e.alpha * e.scale_a * e.scale_b >= 0 && e.beta >= 0 &&
                e.zp_a == 0 && e.zp_b == 0;
  f.has_specials = kind == fill_kind::special;
  f.random_signs = !e.integer_acc && e.zp_a == 0 && e.zp_b == 0 && !f.exact;

  // A and B first: the magnitude of their product sets that of C, bias and residual (their RMS
  // is read only when one of those is there: a pass over each operand, 10-20 ms at 4096^2).
  const bool scaled_operands = std::any_of(roles.begin(), roles.end(), [](operand_role r) {
    return r == operand_role::c || r == operand_role::bias || r == operand_role::residual;
  });
  double rms_a = 1, rms_b = 1;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    if (roles[i] != operand_role::a && roles[i] != operand_role::b) continue;
    const bool is_a = roles[i] == operand_role::a;
    // Block-scaled elements: wide values of the fill kind (as f32), quantized with their scales.
    const fill_params fp = input_params(kind, e.block > 0 ? dtype::f32 : in[i].type(), range, p.dt, k);
    f.random_signs = f.random_signs && symmetric_signs(fp);
    double v = 0;
    if (e.block > 0) {
      const operand_slots sl = slots_of(e);
      v = fill_block_scaled(in[i], in[is_a ? sl.a_scale : sl.b_scale], {e.block, e.block_scale, in[i].type()},
                            is_a ? block_axis::along_rows : block_axis::down_columns, fp, seed, i);
    } else {
      fill_tensor(in[i], fp, seed, i);
      if (scaled_operands) v = centered_rms(in[i], is_a ? e.zp_a : e.zp_b);
    }
    (is_a ? rms_a : rms_b) = v > 0 ? v : 1.0;
  }
  double mag = std::abs(dequant_factor(e, e.scale_b)) * std::sqrt(double(std::max<std::int64_t>(k, 1))) * rms_a * rms_b;
  if (!(mag > 0) || !std::isfinite(mag)) mag = 1.0;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    switch (roles[i]) {
      case operand_role::a:
      case operand_role::b:
      case operand_role::a_scale:
      case operand_role::b_scale: break;
      case operand_role::c:
        fill_tensor(in[i], aux_params(kind, mag / std::max(std::abs(e.beta), 1e-300), range), seed, i);
        break;
      case operand_role::bias:
      case operand_role::residual: fill_tensor(in[i], aux_params(kind, mag, range), seed, i); break;
      case operand_role::scale: {
        fill_params fp;
        fp.kind = fill_kind::uniform;
        fp.lo = 0.5;
        fp.hi = 1.5;
        if (f.exact) {  // powers of two keep every product exact
          fp.kind = fill_kind::exact;
          fp.exact_range = 1;
        }
        fill_tensor(in[i], fp, seed, i);
        std::vector<double> v = in[i].to_vector();
        for (double& x : v) x = e.scale_b * (f.exact ? std::ldexp(1.0, static_cast<int>(x)) : x);
        in[i].assign(v);
        break;
      }
    }
  }
  return f;
}

void dot_int_saturating_pairs(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const double> a,
                              std::span<const double> b, bool a_signed, std::int64_t zp_a, std::int64_t zp_b,
                              std::span<double> acc) {
  const std::int64_t shift = a_signed ? 128 : 0, za = zp_a + shift;
  const auto a_u = [&](std::int64_t i, std::int64_t p) { return static_cast<std::int64_t>(a[i * k + p]) + shift; };
  const auto b_s = [&](std::int64_t p, std::int64_t j) { return static_cast<std::int64_t>(b[p * n + j]); };
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t row_sum = 0;  // sum_p a_u
    for (std::int64_t p = 0; p < k; ++p) row_sum += a_u(i, p);
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t pairs = 0, col_sum = 0;
      for (std::int64_t p = 0; p < k; p += 2) {
        const std::int64_t pair = a_u(i, p) * b_s(p, j) + (p + 1 < k ? a_u(i, p + 1) * b_s(p + 1, j) : 0);
        pairs += std::clamp<std::int64_t>(pair, -32768, 32767);
      }
      for (std::int64_t p = 0; p < k; ++p) col_sum += b_s(p, j);
      // sum (a_u - za)(b - zp_b) with sum a_u*b taken from the saturated pairs; wrapped to i32.
      const std::int64_t s = pairs - zp_b * row_sum - za * col_sum + k * za * zp_b;
      acc[i * n + j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(s));
    }
  }
}

void simulate_dot(const contract& c, const epilogue_spec& e, std::int64_t m, std::int64_t n,
                  std::int64_t k, std::span<const double> a, std::span<const double> b,
                  std::span<double> acc) {
  if (!is_float(c.acc)) return dot_int(m, n, k, a, b, e.zp_a, e.zp_b, acc);
  const contract_arith ar(c);
  std::vector<double> ar_a(a.begin(), a.end()), ar_b(b.begin(), b.end());
  if (c.rounds_inputs()) {
    for (double& x : ar_a) x = ar.input(x);
    for (double& x : ar_b) x = ar.input(x);
  }
  if (c.acc == dtype::f64) return dot_f64(m, n, k, ar_a.data(), ar_b.data(), acc.data());
  if (c.acc == dtype::f32 && c.acc_round == rounding::rne && c.denorm == denormals::ieee) {
    std::vector<float> fa(ar_a.begin(), ar_a.end()), fb(ar_b.begin(), ar_b.end()), fc(m * n);
    dot_f32(m, n, k, fa.data(), fb.data(), fc.data());
    std::copy(fc.begin(), fc.end(), acc.begin());
    return;
  }
  dot_generic(ar, m, n, k, ar_a, ar_b, acc);
}

gemm_error_model make_error_model(const problem& p, const epilogue_spec& e, double k,
                                  double outputs, const fill_traits& f, const bound_options& o) {
  gemm_error_model m;
  const contract& c = p.dt;
  const dtype epi = epilogue_type(c);
  m.k.k_terms = k;
  m.k.exact = f.exact;
  m.k.ulps = c.ulps;
  m.k.u_epi = unit_roundoff(epi, e.integer_acc ? rounding::rne : c.acc_round);
  m.k.eta = underflow_unit(epi, c.denorm);
  if (e.integer_acc) {
    // Conversion, up to two scale products and the multiply, beta*C and its add, bias.
    const double steps = 4 + (e.beta != 0 ? 2 : 0) + (e.has_bias ? 1 : 0);
    m.k.gamma_epi = gamma_deterministic(steps, m.k.u_epi);
    m.g.formula = "exact i32 accumulation";
    return m;
  }
  m.g = accumulation_constant(k + extra_steps(e), outputs, c, f, o);
  m.k.gamma = m.g.gamma;
  if (m.g.random_signs) {
    // The random-sign bound covers the K products' sum, each product also scaled by alpha and
    // the scales where a kernel folds them in first; the epilogue steps after the sum are
    // bounded deterministically (epilogue_error).
    accumulation_gamma products = m.g;
    random_sign_constants(k, outputs, unit_roundoff(c.acc, c.acc_round), o.false_alarm, 1 + extra_steps(e),
                          products);
    m.k.products = products;
    m.k.gamma_steps = gamma_deterministic(extra_steps(e), m.k.u_epi);
  }
  const double rho_a = input_rounding_error(c, c.src), rho_b = input_rounding_error(c, c.wei);
  m.k.rho_prod = (1 + rho_a) * (1 + rho_b) - 1;
  return m;
}

namespace {
std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

// Scales and zero points that put an integer or fp8 contract's outputs in a useful range.
std::string suite_quant_attrs(const contract& c, std::int64_t k) {
  if (is_float(c.src) && traits(c.src).size_bytes == 1) return " scale_a=0.5 scale_b=0.25";
  if (is_float(c.src)) return "";
  std::string s = " scale_a=0.01 scale_b=0.02";
  if (c.src == dtype::u8) s += " zp_a=128";
  // |y| ~ 0.0002 * 74^2 * sqrt(k) for full-range inputs.
  const double y = 1.1 * std::sqrt(double(k));
  if (c.dst == dtype::i8) s += " scale_dst=" + fmt(y / 40);
  if (c.dst == dtype::u8) s += " scale_dst=" + fmt(y / 40) + " zp_dst=128";
  if (c.dst == dtype::i32) s += " scale_dst=" + fmt(y / 1000);
  return s;
}

namespace {

/// The epilogue's features for generated suites (alpha, beta when the op has C, bias,
/// activation, residual, per-channel scales) and the fills.
std::vector<suite_feature> epilogue_features(bool with_beta) {
  std::vector<suite_feature> f{{"alpha", {"alpha=0.5", "alpha=-1.5"}}};
  if (with_beta) f.push_back({"beta", {"beta=0.5", "beta=1"}});
  for (suite_feature& more : std::vector<suite_feature>{
           {"bias", {"bias=1"}},
           {"activation", {"act=relu", "act=gelu", "act=gelu_tanh", "act=silu"}},
           {"residual", {"residual=1"}},
           {"per-channel scale", {"scale_b_mode=per_channel"}},
           {"fill", {"fill=uniform", "fill=positive", "fill=exact", "fill=wide", "fill=cancel", "fill=special"}}})
    f.push_back(std::move(more));
  return f;
}

}  // namespace

feature_table gemm_feature_table(std::string base, std::vector<suite_feature> shape_features, bool with_beta,
                                 std::function<std::int64_t(const problem&)> k_of) {
  feature_table t;
  t.base = std::move(base);
  t.contracts = gemm_contracts();
  t.features = std::move(shape_features);
  for (suite_feature& f : epilogue_features(with_beta)) t.features.push_back(std::move(f));
  t.complete = [k_of](const problem& p) { return suite_quant_attrs(p.dt, k_of(p)); };
  t.not_meaningful = [](const problem& p) -> std::string {
    if (is_float(p.dt.src)) return "";
    if (p.fill != "default" && p.fill != "normal" && p.fill != "positive" && p.fill != "exact")
      return "fill " + p.fill + " is for floating-point inputs";
    // An integer dst's coarse lattice repeats rounding errors, which the bias test reads as bias.
    if (p.fill == "exact" && !is_float(p.dt.dst)) return "exact fill with an integer output: repeated rounding errors";
    return "";
  };
  return t;
}

operand_slots slots_of(const epilogue_spec& e) {
  operand_slots s;
  int next = 2;
  if (e.block > 0) {
    s.a_scale = next++;
    s.b_scale = next++;
  }
  if (e.beta != 0.0) s.c = next++;
  if (e.has_bias) s.bias = next++;
  if (e.has_residual) s.residual = next++;
  if (e.per_channel) s.scale = next++;
  return s;
}

std::vector<operand_role> roles_of(const epilogue_spec& e, std::size_t n_inputs) {
  const operand_slots sl = slots_of(e);
  std::vector<operand_role> roles(n_inputs, operand_role::a);
  roles[1] = operand_role::b;
  if (sl.a_scale >= 0) roles[sl.a_scale] = operand_role::a_scale;
  if (sl.b_scale >= 0) roles[sl.b_scale] = operand_role::b_scale;
  if (sl.c >= 0) roles[sl.c] = operand_role::c;
  if (sl.bias >= 0) roles[sl.bias] = operand_role::bias;
  if (sl.residual >= 0) roles[sl.residual] = operand_role::residual;
  if (sl.scale >= 0) roles[sl.scale] = operand_role::scale;
  return roles;
}

namespace {

// The largest |x - zp| over the values of integer type t.
double max_centered(dtype t, std::int64_t zp) {
  return std::max(std::abs(traits(t).lowest - double(zp)), std::abs(traits(t).max - double(zp)));
}

}  // namespace

bool i32_may_overflow(const contract& c, const epilogue_spec& e, double k) {
  return e.integer_acc && k * max_centered(c.src, e.zp_a) * max_centered(c.wei, e.zp_b) > 2147483647.0;
}

std::vector<double> dot_operand(const tensor& t, std::int64_t zp, dot_values v, bool first) {
  return dot_operand(t.to_vector(), zp, v, first);
}

std::vector<double> dot_operand(std::vector<double> values, std::int64_t zp, dot_values v, bool first) {
  std::vector<double> x = centered(std::move(values), zp);
  const bool ones = (v == dot_values::first_magnitudes && !first) || (v == dot_values::second_magnitudes && first);
  if (ones) std::fill(x.begin(), x.end(), 1.0);
  if (v == dot_values::magnitudes || v == dot_values::first_magnitudes || v == dot_values::second_magnitudes)
    for (double& e : x) e = std::abs(e);
  if (v == dot_values::squares)
    for (double& e : x) e *= e;
  return x;
}

op_counts gemm_counts(const op_spec& s, const problem& p, double flops) {
  op_counts c;
  c.flops = flops;
  for (const auto& list : {s.inputs(p), s.outputs(p)})
    for (const auto& o : list) c.bytes += double(element_count(o.shape)) * traits(o.type).size_bytes;
  return c;
}

epilogue_reader::epilogue_reader(const epilogue_spec& e, std::span<const tensor> in, std::int64_t inner,
                                 std::int64_t channels)
    : e_(e), inner_(inner), channels_(channels) {
  const operand_slots sl = slots_of(e);
  if (sl.c >= 0) c_ = in[sl.c].to_vector();
  if (sl.bias >= 0) bias_ = in[sl.bias].to_vector();
  if (sl.residual >= 0) residual_ = in[sl.residual].to_vector();
  if (sl.scale >= 0) scale_ = in[sl.scale].to_vector();
}

epilogue_inputs epilogue_reader::at(std::int64_t linear) const {
  const std::int64_t ch = (linear / inner_) % channels_;
  epilogue_inputs v;
  v.scale_b = scale_.empty() ? e_.scale_b : scale_[ch];
  if (!c_.empty()) v.c = c_[linear];
  if (!bias_.empty()) v.bias = bias_[ch];
  if (!residual_.empty()) v.residual = residual_[linear];
  return v;
}

void epilogue_reference_all(const contract& c, const epilogue_spec& e, const epilogue_reader& rd,
                            std::vector<double>& dots) {
#pragma omp parallel for schedule(static) if (dots.size() > 4096)
  for (std::int64_t i = 0; i < std::int64_t(dots.size()); ++i) dots[i] = epilogue_reference(e, dots[i], rd.at(i));
  if (e.integer_dst)
    for (double& v : dots) v = std::clamp(v, traits(c.dst).lowest, traits(c.dst).max);
}

void epilogue_simulate_all(const contract& c, const epilogue_spec& e, const epilogue_reader& rd,
                           std::vector<double>& acc) {
#pragma omp parallel for schedule(static) if (acc.size() > 4096)
  for (std::int64_t i = 0; i < std::int64_t(acc.size()); ++i) acc[i] = epilogue_simulate(c, e, acc[i], rd.at(i));
}

namespace {

// dot_sums::reach of every output: zeros where the contract keeps the inputs' subnormals.
std::vector<double> input_reach(const contract& c, const epilogue_spec& e, double k, double rho,
                                const std::function<std::vector<double>(dot_values)>& exact_dots, std::size_t n) {
  const double alpha_a = input_absolute_error(c, c.src), alpha_b = input_absolute_error(c, c.wei);
  if (e.integer_acc || (alpha_a == 0 && alpha_b == 0)) return std::vector<double>(n, 0.0);
  std::vector<double> reach = exact_dots(dot_values::first_magnitudes);
  const std::vector<double> sum_b = exact_dots(dot_values::second_magnitudes);
  for (std::size_t i = 0; i < n; ++i) reach[i] = product_reach(alpha_a, alpha_b, rho, k, reach[i], sum_b[i]);
  return reach;
}

}  // namespace

double product_reach(double alpha_a, double alpha_b, double rho, double k, double sum_abs_a, double sum_abs_b) {
  return (1 + rho) * (alpha_b * sum_abs_a + alpha_a * sum_abs_b) + k * alpha_a * alpha_b;
}

error_bound gemm_bound(const problem& p, const epilogue_spec& e, double k, const dims& shape, const fill_traits& f,
                       const bound_options& o, const epilogue_reader& rd,
                       const std::function<std::vector<double>(dot_values)>& exact_dots, const tensor& ref) {
  const gemm_error_model model = make_error_model(p, e, k, double(element_count(shape)), f, o);
  const std::vector<double> dots = identity_epilogue(e) && ref.type() == dtype::f64 && ref.shape() == shape
                                       ? ref.to_vector()
                                       : exact_dots(dot_values::signed_values);
  const std::vector<double> abs_dots = e.integer_acc ? dots : exact_dots(dot_values::magnitudes);
  const std::vector<double> square_dots = model.g.random_signs ? exact_dots(dot_values::squares) : dots;
  const std::vector<double> reach = input_reach(p.dt, e, k, model.k.rho_prod, exact_dots, dots.size());
  std::vector<double> b(dots.size());
#pragma omp parallel for schedule(static) if (b.size() > 4096)
  for (std::int64_t i = 0; i < std::int64_t(b.size()); ++i) {
    const double v = epilogue_error(e, model.k, {dots[i], abs_dots[i], square_dots[i], reach[i]}, rd.at(i));
    b[i] = std::isfinite(v) ? v : std::numeric_limits<double>::infinity();
  }
  error_bound eb;
  eb.compute = make_f64(shape, b);
  eb.formula = epilogue_formula(e, model.k, model.g.formula);
  eb.meaningful = model.g.meaningful;
  eb.why_not = model.g.why_not;
  return eb;
}

bool identity_epilogue(const epilogue_spec& e) {
  return dequant_factor(e, e.scale_b) == 1.0 && !e.per_channel && e.beta == 0.0 && !e.has_bias && !e.has_residual &&
         e.act == activation::none && !e.integer_dst;
}

std::vector<std::int64_t> batch_offsets(const dims& out_batch, const tensor& t) {
  return batch_offsets(out_batch, t.shape(), t.strides());
}

std::vector<std::int64_t> batch_offsets(const dims& out_batch, const dims& shape, const dims& strides) {
  const std::size_t rank = shape.size() - 2, skip = out_batch.size() - rank;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(element_count(out_batch)));
  for (std::size_t ob = 0; ob < offsets.size(); ++ob) {
    std::int64_t rem = static_cast<std::int64_t>(ob), off = 0;
    for (std::size_t d = out_batch.size(); d-- > 0;) {
      const std::int64_t coord = rem % out_batch[d];
      rem /= out_batch[d];
      if (d >= skip && shape[d - skip] != 1) off += coord * strides[d - skip];
    }
    offsets[ob] = off;
  }
  return offsets;
}

std::string non_gemm_feature(const problem& p, const epilogue_spec& e) {
  if (e.block > 0) return "block scaling (block=" + std::to_string(e.block) + ", A_scale and B_scale)";
  if (e.has_bias) return "bias=true";
  if (e.act != activation::none) return "act=" + p.get_choice("act");
  if (e.has_residual) return "residual=true";
  if (e.per_channel) return "scale_b_mode=per_channel";
  if (e.scale_a != 1.0 || e.scale_b != 1.0) return "dequantization scales (scale_a / scale_b)";
  if (e.zp_a != 0 || e.zp_b != 0) return "zero points (zp_a / zp_b)";
  if (e.scale_dst != 1.0 || e.zp_dst != 0) return "output quantization (scale_dst / zp_dst)";
  return {};
}

}  // namespace opval::ops::common_gemm
