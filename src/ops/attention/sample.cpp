// attention: sampled verification (docs/NUMERICS.md "Sampled verification"): a stratified
// sample of query rows, every key and value kept, as a smaller attention problem. Causal
// masking and sliding windows depend on the query's position, which the smaller problem loses:
// they become -inf entries of an explicit bias, which masks exactly as they do.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ops/attention/attention.hpp"
#include "ops/common_gemm/gemm_sample.hpp"

namespace opval::ops::attention {

using common_gemm::sample_tile;
using common_gemm::sampled_indices;
using common_gemm::take;

namespace {

bool positional_mask(const attention_shape& s) {
  return s.causal != causal_kind::none || s.window_left >= 0 || s.window_right >= 0;
}

// The bias of the sampled query rows: the problem's own (or 0), -inf where causality or the
// window masks the key. Its planes are the problem's bias planes (or one).
tensor sampled_bias(const attention_shape& s, const std::vector<double>& mask, dtype type,
                    const std::vector<std::int64_t>& rows) {
  const dims own = s.bias_dims();
  const std::int64_t planes = own.size() == 4 ? own[0] * own[1] : 1;  // [B|1, H|1, Lq, Lk] or [Lq, Lk]
  dims shape = s.bias ? own : dims{s.lq, s.lk};
  shape[shape.size() - 2] = std::int64_t(rows.size());
  std::vector<double> values(std::size_t(planes) * rows.size() * std::size_t(s.lk));
  std::size_t at = 0;
  for (std::int64_t plane = 0; plane < planes; ++plane)
    for (const std::int64_t i : rows)
      for (std::int64_t j = 0; j < s.lk; ++j, ++at) {
        const bool visible = j >= s.first_key(i) && j <= s.last_key(i);
        values[at] = !visible ? -std::numeric_limits<double>::infinity()
                              : s.bias ? mask[std::size_t((plane * s.lq + i) * s.lk + j)] : 0.0;
      }
  tensor t(type, shape);
  t.assign(values);
  return t;
}

}  // namespace

std::optional<output_sample> attention_spec::sample(const problem& p, std::span<const tensor> in,
                                                    std::uint64_t seed) const {
  const attention_shape s = attention_shape::of(p);
  const bool positional = positional_mask(s);
  // A mask moved into the bias needs -inf in Q's type; and NaN queries legitimately differ
  // between masking a key and adding -inf to its logit (attention.hpp, the special fill).
  if (positional && (!traits(p.dt.src).has_inf || p.fill == "special")) return std::nullopt;
  const std::vector<std::int64_t> rows = sampled_indices(s.lq, sample_tile, seed, 0);
  output_sample out{.sub = p};
  out.sub.set("lq", std::int64_t(rows.size()));
  out.inputs.push_back(take(in[0], 2, rows));  // Q [B, H, Lq, D]: its sampled rows
  out.inputs.push_back(in[1]);
  out.inputs.push_back(in[2]);
  std::size_t next = 3;
  std::vector<double> mask;  // only the bias is read whole, not Q, K and V
  if (s.bias) {
    if (positional) mask = in[next].to_vector();
    else out.inputs.push_back(take(in[next], in[next].rank() - 2, rows));
    ++next;
  }
  if (positional) {
    out.sub.set("causal", std::string("none"));
    out.sub.set("window_left", std::int64_t(-1));
    out.sub.set("window_right", std::int64_t(-1));
    out.sub.set("mask", std::string("bias"));
    if (!s.bias) out.sub.set("mask_shape", std::string("lq_lk"));
    out.inputs.push_back(sampled_bias(s, mask, p.dt.src, rows));
  }
  if (s.key_lengths) out.inputs.push_back(in[next]);
  std::vector<std::int64_t>& where = out.where.emplace_back();
  where.reserve(std::size_t(s.b * s.h) * rows.size() * std::size_t(s.dv));
  for (std::int64_t bh = 0; bh < s.b * s.h; ++bh)
    for (const std::int64_t i : rows)
      for (std::int64_t c = 0; c < s.dv; ++c) where.push_back((bh * s.lq + i) * s.dv + c);
  out.coverage = fmt::format("every head and batch, one random query row in every aligned band of {0} rows (every row "
                             "up to {1}), and rows 0, the last and the first of the last partial tile of each tiling "
                             "8 to 128, each against every key{2}",
                             sample_tile, 4 * sample_tile,
                             positional ? "; the causal mask and the window become -inf entries of an explicit bias"
                                        : "");
  return out;
}

}  // namespace opval::ops::attention
