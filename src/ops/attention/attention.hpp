#pragma once
// Scaled dot-product attention: O = softmax(cap(scale * Q K^T) + bias, masked) V, with
// grouped-query heads, causal masking in both alignments, a sliding window, score soft-capping,
// an additive bias broadcast over batch and heads as PyTorch's attn_mask, per-batch key lengths.
//
// Semantics (what the reference defines and every kernel must match):
//  - Shapes: Q [B,H,Lq,D], K [B,Hkv,Lk,D], V [B,Hkv,Lk,Dv], O [B,H,Lq,Dv]; query head h reads
//    key/value head h / (H/Hkv) (consecutive query heads share one kv head, as PyTorch's
//    enable_gqa and FlashAttention).
//  - Key j is visible to query i when j < key_lengths[b] (if the input is present) and, for
//    causal=top_left, j <= i; for causal=bottom_right, j <= i + Lk - Lq (FlashAttention >= 2.1;
//    aligned to the padded Lk, independently of key_lengths).
//  - Sliding window (FlashAttention's window_size=(left, right); -1 = unbounded): key j is
//    visible only when i + off - window_left <= j <= i + off + window_right, off = 0 for
//    causal=top_left, Lk - Lq otherwise (the window shares the causal diagonal; bottom-right
//    as FlashAttention without causal).
//  - softcap=c > 0 caps the scaled scores: s -> c tanh(s / c) (Gemma 2, FlashAttention's
//    softcap), before the bias.
//  - mask=bias adds a tensor (stored in Q's type) to the (capped) logits; mask_shape says its
//    dims, broadcast like PyTorch SDPA's attn_mask: lq_lk [Lq,Lk], b_1_lq_lk [B,1,Lq,Lk],
//    1_h_lq_lk [1,H,Lq,Lk], b_h_lq_lk [B,H,Lq,Lk]; a -inf entry masks its key (probability
//    exactly 0).
//  - A fully masked row (no visible key, or every visible logit -inf) outputs exactly 0, as
//    FlashAttention does (PyTorch's math SDPA gives NaN there; opval follows FlashAttention).
//  - A NaN logit among a row's visible keys makes the whole output row NaN.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::attention {

enum class causal_kind { none, top_left, bottom_right };

/// The sizes and options of one problem, with defaults resolved.
struct attention_shape {
  std::int64_t b = 1, h = 1, hkv = 1, lq = 1, lk = 1, d = 1, dv = 1;
  double scale = 1;
  double softcap = 0;  ///< 0: no capping
  causal_kind causal = causal_kind::none;
  std::int64_t window_left = -1, window_right = -1;  ///< -1: unbounded
  bool bias = false;
  bool bias_batch = false, bias_heads = false;  ///< the bias has a B (a H) dimension
  bool key_lengths = false;

  static attention_shape of(const problem& p);
  std::int64_t rows() const { return b * h * lq; }  ///< query rows (b, head, i)
  /// Index of the causal limit: keys j > limit(i) are masked (a huge value when not causal).
  std::int64_t causal_limit(std::int64_t i) const;
  /// Keys visible to query i by causality and the sliding window: j in [first, last].
  std::int64_t first_key(std::int64_t i) const;
  std::int64_t last_key(std::int64_t i) const;
  /// The dims of the bias input.
  dims bias_dims() const;
  /// The score after soft-capping (the identity without softcap).
  double cap(double score) const;
};

/// The inputs of one case as doubles (logical row-major), with accessors by (batch, head, row).
struct attention_data {
  attention_shape s;
  std::vector<double> q, k, v, mask;
  std::vector<std::int64_t> key_len;  ///< per batch (Lk when the input is absent)

  attention_data(const problem& p, std::span<const tensor> in);
  const double* q_row(std::int64_t b, std::int64_t hd, std::int64_t i) const {
    return q.data() + ((b * s.h + hd) * s.lq + i) * s.d;
  }
  const double* k_row(std::int64_t b, std::int64_t hd, std::int64_t j) const {
    return k.data() + ((b * s.hkv + hd / (s.h / s.hkv)) * s.lk + j) * s.d;
  }
  const double* v_row(std::int64_t b, std::int64_t hd, std::int64_t j) const {
    return v.data() + ((b * s.hkv + hd / (s.h / s.hkv)) * s.lk + j) * s.dv;
  }
  bool visible(std::int64_t b, std::int64_t i, std::int64_t j) const {
    return j < key_len[b] && j >= s.first_key(i) && j <= s.last_key(i);
  }
  double bias(std::int64_t b, std::int64_t hd, std::int64_t i, std::int64_t j) const {
    if (!s.bias) return 0.0;
    const std::int64_t plane = (s.bias_batch ? b * (s.bias_heads ? s.h : 1) : 0) + (s.bias_heads ? hd : 0);
    return mask[(plane * s.lq + i) * s.lk + j];
  }
  /// Decomposes a query-row number into (batch, head, i).
  void unravel(std::int64_t row, std::int64_t& b, std::int64_t& hd, std::int64_t& i) const {
    i = row % s.lq;
    hd = (row / s.lq) % s.h;
    b = row / (s.lq * s.h);
  }
};

/// The logits of one query row: logit(j) for visible keys, -inf for masked ones.
template <class Logit>
void row_logits(const attention_data& d, std::int64_t b, std::int64_t i, std::span<double> out, Logit&& logit) {
  for (std::int64_t j = 0; j < d.s.lk; ++j)
    out[j] = d.visible(b, i, j) ? logit(j) : -std::numeric_limits<double>::infinity();
}

/// Runs every query row, in parallel: fills its logits (logit(w, q, k_j, b, hd, i, j) for visible keys,
/// -inf for masked ones; b, hd locate the bias) and calls body(w, row, b, hd, i, logits). Each thread has its own
/// scratch w = make_scratch() and logits buffer.
template <class MakeScratch, class Logit, class Body>
void for_each_query_row(const attention_data& d, MakeScratch&& make_scratch, Logit&& logit, Body&& body) {
  const attention_shape& s = d.s;
#pragma omp parallel
  {
    auto w = make_scratch();
    std::vector<double> logits(s.lk);
#pragma omp for schedule(static)
    for (std::int64_t row = 0; row < s.rows(); ++row) {
      std::int64_t b, hd, i;
      d.unravel(row, b, hd, i);
      const double* q = d.q_row(b, hd, i);
      row_logits(d, b, i, logits, [&](std::int64_t j) { return logit(w, q, d.k_row(b, hd, j), b, hd, i, j); });
      body(w, row, b, hd, i, static_cast<const std::vector<double>&>(logits));
    }
  }
}

/// The attention op.
class attention_spec final : public op_spec {
 public:
  std::string_view name() const override { return "attention"; }
  std::string_view summary() const override {
    return "scaled dot-product attention softmax(cap(scale*Q.K^T) + mask) V with GQA, causal, sliding window, "
           "softcap, bias, key lengths";
  }
  const attr_schema& schema() const override;
  std::vector<std::string> fills() const override;
  std::vector<std::string> contracts() const override;
  std::vector<std::string_view> contract_options() const override {
    return {"in_round", "acc_round", "mid", "denorm", "dst_round", "ulp:exp", "ulp:div", "ulp:tanh"};
  }
  void validate(const problem& p) const override;
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  /// Sampled query rows (sample.cpp); no checksums: only the output is visible, and a check of
  /// P V needs P, which costs as much as the reference.
  std::optional<output_sample> sample(const problem& p, std::span<const tensor> in, std::uint64_t seed) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// Sizes, causal alignments, grouped heads, the bias mask and its broadcast shapes, soft-capping,
  /// sliding windows, key lengths, value head sizes, the scale and the fills, at every contract
  /// and intermediate type.
  feature_table features() const override;
};

}  // namespace opval::ops::attention
