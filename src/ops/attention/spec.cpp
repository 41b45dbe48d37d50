// attention: attributes, shapes, contracts, fills and registration. Numerics: reference.cpp,
// sim.cpp, bound.cpp; suites: suite.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "opval/attr.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "core/fill.hpp"
#include "core/rng.hpp"
#include "ops/attention/attention.hpp"

namespace opval::ops::attention {

attention_shape attention_shape::of(const problem& p) {
  attention_shape s;
  s.b = p.get_int("b");
  s.h = p.get_int("h");
  s.hkv = p.get_int("hkv") == 0 ? s.h : p.get_int("hkv");
  s.lq = p.get_int("lq");
  s.lk = p.get_int("lk");
  s.d = p.get_int("d");
  s.dv = p.get_int("dv") == 0 ? s.d : p.get_int("dv");
  s.scale = p.get_real("scale") == 0 ? 1.0 / std::sqrt(static_cast<double>(s.d)) : p.get_real("scale");
  const std::string& c = p.get_choice("causal");
  s.causal = c == "top_left" ? causal_kind::top_left : c == "bottom_right" ? causal_kind::bottom_right : causal_kind::none;
  s.softcap = p.get_real("softcap");
  s.window_left = p.get_int("window_left");
  s.window_right = p.get_int("window_right");
  s.bias = p.get_choice("mask") == "bias";
  const std::string& ms = p.get_choice("mask_shape");
  s.bias_batch = ms == "b_1_lq_lk" || ms == "b_h_lq_lk";
  s.bias_heads = ms == "1_h_lq_lk" || ms == "b_h_lq_lk";
  s.key_lengths = p.get_bool("key_lengths");
  return s;
}

std::int64_t attention_shape::causal_limit(std::int64_t i) const {
  switch (causal) {
    case causal_kind::top_left: return i;
    case causal_kind::bottom_right: return i + lk - lq;
    case causal_kind::none: break;
  }
  return lk;
}

namespace {
// The diagonal the causal mask and the sliding window share: key i + offset is query i's own.
std::int64_t diagonal(const attention_shape& s) { return s.causal == causal_kind::top_left ? 0 : s.lk - s.lq; }
}  // namespace

std::int64_t attention_shape::first_key(std::int64_t i) const {
  return window_left < 0 ? 0 : i + diagonal(*this) - window_left;
}

std::int64_t attention_shape::last_key(std::int64_t i) const {
  const std::int64_t limit = causal_limit(i);
  return window_right < 0 ? limit : std::min(limit, i + diagonal(*this) + window_right);
}

dims attention_shape::bias_dims() const {
  if (!bias_batch && !bias_heads) return {lq, lk};
  return {bias_batch ? b : 1, bias_heads ? h : 1, lq, lk};
}

double attention_shape::cap(double score) const { return softcap > 0 ? softcap * std::tanh(score / softcap) : score; }

attention_data::attention_data(const problem& p, std::span<const tensor> in)
    : s(attention_shape::of(p)), q(in[0].to_vector()), k(in[1].to_vector()), v(in[2].to_vector()) {
  std::size_t next = 3;
  if (s.bias) mask = in[next++].to_vector();
  key_len.assign(s.b, s.lk);
  if (s.key_lengths) {
    const std::vector<double> lens = in[next].to_vector();
    for (std::int64_t b = 0; b < s.b; ++b) key_len[b] = static_cast<std::int64_t>(lens[b]);
  }
}

const attr_schema& attention_spec::schema() const {
  static const attr_schema s{
      int_attr("b", 2, "batch", 0),
      int_attr("h", 4, "query heads", 1),
      int_attr("hkv", 0, "key/value heads (0 = h); h must be a multiple (grouped-query attention)", 0),
      int_attr("lq", 64, "query length", 0),
      int_attr("lk", 64, "key/value length", 1),
      int_attr("d", 64, "head dimension of Q and K", 1),
      int_attr("dv", 0, "head dimension of V and O (0 = d)", 0),
      real_attr("scale", 0.0, "logit scale (0 = 1/sqrt(d))"),
      choice_attr("causal", "none", {"none", "top_left", "bottom_right"},
                  "causal mask: top_left j <= i; bottom_right j <= i + lk - lq (FlashAttention 2.1+)"),
      real_attr("softcap", 0.0, "score soft-cap c > 0: scores -> c*tanh(scores/c) before the bias (0 = none)"),
      int_attr("window_left", -1, "sliding window: keys more than window_left before the diagonal are masked (-1 = none)", -1),
      int_attr("window_right", -1, "sliding window: keys more than window_right after the diagonal are masked (-1 = none)", -1),
      choice_attr("mask", "none", {"none", "bias"}, "bias: an additive input, shaped as mask_shape says"),
      choice_attr("mask_shape", "lq_lk", {"lq_lk", "b_1_lq_lk", "1_h_lq_lk", "b_h_lq_lk"},
                  "dims of the bias, broadcast to [b,h,lq,lk] as PyTorch SDPA's attn_mask"),
      bool_attr("key_lengths", false, "an i32 [b] input: keys j >= key_lengths[b] are masked"),
  };
  return s;
}

std::vector<std::string> attention_spec::fills() const { return {"normal", "uniform", "large", "special"}; }

std::vector<std::string> attention_spec::contracts() const {
  return {"f32:f32:f32", "f32@tf32:f32:f32", "bf16:f32:bf16", "f16:f32:f16"};
}

void attention_spec::validate(const problem& p) const {
  const attention_shape s = attention_shape::of(p);
  // An empty batch or query sequence is an empty output; zero keys would be a softmax over
  // nothing, which attention does not define.
  for (auto [name, v] : {std::pair{"b", s.b}, {"lq", s.lq}})
    if (v < 0) throw error(fmt::format("attention: {}={} must be >= 0", name, v));
  for (auto [name, v] : {std::pair{"h", s.h}, {"lk", s.lk}, {"d", s.d}, {"dv", s.dv}})
    if (v < 1) throw error(fmt::format("attention: {}={} must be >= 1", name, v));
  if (s.h % s.hkv != 0)
    throw error(fmt::format("attention: h={} is not a multiple of hkv={} (grouped-query heads)", s.h, s.hkv));
  if (!std::isfinite(s.scale)) throw error("attention: scale must be finite");
  if (!(std::isfinite(s.softcap) && s.softcap >= 0))
    throw error(fmt::format("attention: softcap={} must be finite and >= 0 (0 = no capping)", s.softcap));
  if (!s.bias && p.get_choice("mask_shape") != "lq_lk")
    throw error("attention: mask_shape needs mask=bias (there is no mask to shape)");
  const contract& c = p.dt;
  auto io_type = [](dtype t) { return t == dtype::f32 || t == dtype::bf16 || t == dtype::f16; };
  const bool math_ok = c.math == c.src || (c.src == dtype::f32 && c.math == dtype::tf32);
  const bool mid_ok = io_type(c.mid) || c.mid == dtype::tf32;
  if (!io_type(c.src) || c.wei != c.src || !math_ok || c.acc != dtype::f32 || !io_type(c.dst) || !mid_ok)
    throw error(fmt::format("attention does not support contract {}{} (Q/K/V f32, bf16 or f16, optionally "
                            "f32@tf32; accumulation f32; output f32, bf16 or f16; mid f32, tf32, bf16 or f16)",
                            c.types_string(), c.mid != c.acc ? " mid=" + std::string(to_string(c.mid)) : ""));
}

std::vector<operand> attention_spec::inputs(const problem& p) const {
  const attention_shape s = attention_shape::of(p);
  std::vector<operand> ops = {{"q", p.dt.src, {s.b, s.h, s.lq, s.d}, {}},
                              {"k", p.dt.wei, {s.b, s.hkv, s.lk, s.d}, {}},
                              {"v", p.dt.wei, {s.b, s.hkv, s.lk, s.dv}, {}}};
  if (s.bias) ops.push_back({"mask", p.dt.src, s.bias_dims(), {}});
  if (s.key_lengths) ops.push_back({"key_lengths", dtype::i32, {s.b}, {}});
  return ops;
}

std::vector<operand> attention_spec::outputs(const problem& p) const {
  const attention_shape s = attention_shape::of(p);
  return {{"o", p.dt.dst, {s.b, s.h, s.lq, s.dv}, {}}};
}

op_counts attention_spec::counts(const problem& p) const {
  const attention_shape s = attention_shape::of(p);
  // In double: the int64 products of four extents can overflow.
  const double bh = double(s.b) * double(s.h), bhkv = double(s.b) * double(s.hkv);
  const double logits = bh * double(s.lq) * double(s.lk);
  const double in_bytes = traits(p.dt.src).size_bytes * bh * double(s.lq) * double(s.d) +
                          traits(p.dt.wei).size_bytes * bhkv * double(s.lk) * double(s.d + s.dv);
  const double out_bytes = traits(p.dt.dst).size_bytes * bh * double(s.lq) * double(s.dv);
  return {logits * (2.0 * (s.d + s.dv) + 5.0), in_bytes + out_bytes};
}

namespace {

// Overwrites a fraction `rate` of t's elements with `value` (draws from its own stream).
void sprinkle(tensor& t, double value, double rate, std::uint64_t seed, std::uint64_t stream) {
  for (std::int64_t i = 0, n = t.numel(); i < n; ++i)
    if (random_uniform(seed, stream, static_cast<std::uint64_t>(i)) < rate) t.set_at(i, value);
}

// Key lengths in [1, lk] for even batches and [0, lk] for odd ones: empty batches test the
// fully masked rows without ever masking the whole output.
void fill_key_lengths(tensor& t, std::int64_t lk, std::uint64_t seed, std::uint64_t stream) {
  for (std::int64_t b = 0; b < t.numel(); ++b) {
    const std::uint64_t r = random_bits(seed, stream, static_cast<std::uint64_t>(b));
    t.set_at(b, b % 2 == 0 ? static_cast<double>(1 + r % lk) : static_cast<double>(r % (lk + 1)));
  }
}

}  // namespace

fill_traits attention_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  const attention_shape s = attention_shape::of(p);
  // Q and K are drawn so that the logits scale*q.k have a standard deviation of about 2
  // (realistic attention: several keys share the weight, so every mask decides something) or
  // about 60 (`large`: exp overflows f32 without max subtraction), whatever d and scale are:
  // std(q.k) = sigma_q sigma_k sqrt(d). With softcap=c the spread is max(2, c/2), so that
  // scores reach the curved part of c tanh(s/c) and an ignored cap shows.
  const double unit = std::abs(s.scale) * std::sqrt(static_cast<double>(s.d));
  const double spread = s.softcap > 0 ? std::max(2.0, 0.5 * s.softcap) : 2.0;
  fill_params qk, v;
  qk.kind = fill_kind::normal;
  qk.scale = std::sqrt(spread / unit);
  if (p.fill == "uniform") {
    qk.kind = v.kind = fill_kind::uniform;
    qk.hi = std::sqrt(3.0 * spread / unit), qk.lo = -qk.hi;  // uniform[-a,a] has variance a^2/3
  } else if (p.fill == "large") {
    qk.kind = fill_kind::uniform;
    qk.hi = std::sqrt(180.0 / unit), qk.lo = -qk.hi;
  }
  fill_tensor(in[0], qk, seed, 0);
  fill_tensor(in[1], qk, seed, 1);
  fill_tensor(in[2], v, seed, 2);
  fill_traits t;
  // V's signs are fair coins independent of every magnitude (and of Q, K, which set the
  // weights): P.V gets the random-sign bound (bound.cpp). Q and K are symmetric as well, so
  // each q.k sum is a sum of random-sign products too.
  t.random_signs = symmetric_signs(qk) && symmetric_signs(v);
  // NaNs in Q only: a NaN query row must come out NaN (K or V NaNs behind a mask are
  // kernel-dependent: skipped blocks never read them).
  // One NaN at a seeded position on top: every special problem holds one, however small.
  if (p.fill == "special" && in[0].numel() > 0) {
    sprinkle(in[0], std::numeric_limits<double>::quiet_NaN(), 0.01, seed, 100);
    in[0].set_at(static_cast<std::int64_t>(random_bits(seed, 102, 0) % static_cast<std::uint64_t>(in[0].numel())),
                 std::numeric_limits<double>::quiet_NaN());
    t.has_specials = true;
  }
  std::size_t next = 3;
  if (s.bias) {
    fill_params bp;
    fill_tensor(in[next], bp, seed, next);
    // -inf entries mask keys; not with NaN queries, where where()-masking and additive
    // masking legitimately differ on a row that the bias masks entirely.
    if (p.fill != "special") sprinkle(in[next], -std::numeric_limits<double>::infinity(), 0.125, seed, 101);
    ++next;
  }
  if (s.key_lengths) fill_key_lengths(in[next], s.lk, seed, next);
  return t;
}

OPVAL_REGISTER_OP(attention_spec);

}  // namespace opval::ops::attention
