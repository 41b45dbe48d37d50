/* flash_attention: an example opval plugin, a CPU forward attention kernel with the structure
 * of FlashAttention-2 (Dao, 2023), for opval's `attention` op.
 *
 * O = softmax(scale * Q K^T + bias, masked) V is computed one (batch, head) and one block of
 * block_q query rows at a time, streaming over blocks of block_k keys: the block's logits S
 * are formed in f32, and an ONLINE softmax keeps per query row a running maximum m and a
 * running sum l of exp(S - m); when a block raises the maximum, l and the output
 * accumulator are rescaled by exp(m_old - m_new). The full Lq x Lk score matrix never exists.
 * At the end each row is divided by l and rounded to the output type (round to nearest even).
 *
 * Contracts: Q/K/V in f32 or bf16, f32 accumulation, output f32 or bf16 (bf16:f32:bf16,
 * f32:f32:f32, ...); with `mid=bf16`, P is rounded to bf16 before P.V, as FlashAttention
 * does for its tensor-core P.V product (l still sums the unrounded f32 P). Attributes: any
 * scale, causal none / top_left / bottom_right (blocks entirely above the diagonal are
 * skipped), grouped-query heads (hkv < h), an additive bias (mask=bias, -inf masks a key)
 * and per-batch key lengths. Strides are honoured for every operand. Everything else (tf32
 * and f16 contracts, other rounding modes, denorm=ftz, ulp=) is declined with the reason.
 *
 * Built twice: `flash_attention` and `flash_attention_buggy` (FLASH_PLANTED_BUG=1), which
 * forgets to rescale the running sum l when the maximum grows, a bug that is invisible as long
 * as every row's maximum lies in its first key block (e.g. Lk <= block_k).
 *
 * Written against include/opval/plugin.h only (C ABI, no opval C++ headers), single-threaded
 * on purpose: the point is the numerics. No exception leaves an exported function.
 */
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "opval/plugin.h"

#ifndef FLASH_PLANTED_BUG
#define FLASH_PLANTED_BUG 0
#endif

namespace {

constexpr int64_t block_q = 32;  // Br: query rows per block
constexpr int64_t block_k = 64;  // Bc: keys per block (opval's bound allows >= 16 per rescale)
constexpr float neg_inf = -std::numeric_limits<float>::infinity();
const char* const plugin_name = FLASH_PLANTED_BUG ? "flash_attention_buggy" : "flash_attention";

/* Writes a reason or message and returns code. */
int report(int code, char* buf, size_t size, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  if (size > 0) vsnprintf(buf, size, fmt, args);
  va_end(args);
  return code;
}

/* The value of attribute `name`, or "" when the op has none. */
const char* attr(const opval_problem* p, const char* name) {
  for (size_t i = 0; i < p->n_attrs; ++i)
    if (std::strcmp(p->attrs[i].name, name) == 0) return p->attrs[i].value;
  return "";
}

float bf16_to_f32(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/* f32 -> bf16, round to nearest even; NaN stays a (quiet) NaN instead of rounding to inf. */
uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float round_to_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }

/* One operand: element (i0, i1, ...) at data + sum i_d * strides[d], f32 or bf16. */
struct operand {
  const opval_tensor* t;
  float load(int64_t offset) const {
    return t->dtype == OPVAL_DTYPE_BF16 ? bf16_to_f32(static_cast<const uint16_t*>(t->data)[offset])
                                        : static_cast<const float*>(t->data)[offset];
  }
  void store(int64_t offset, float x) const {
    if (t->dtype == OPVAL_DTYPE_BF16) static_cast<uint16_t*>(t->data)[offset] = f32_to_bf16(x);
    else static_cast<float*>(t->data)[offset] = x;
  }
  int64_t stride(int d) const { return t->strides[d]; }
  /* Offset of (b, h, row) in a rank-4 [B, H, L, D] operand; add e * stride(3). */
  int64_t row(int64_t b, int64_t h, int64_t i) const {
    return b * t->strides[0] + h * t->strides[1] + i * t->strides[2];
  }
};

enum class causal_kind { none, top_left, bottom_right };

/* The problem's options, read from its attributes and contract options. */
struct options {
  double scale = 0;  // 0 = 1/sqrt(d), resolved in execute where d is known
  causal_kind causal = causal_kind::none;
  bool bias = false, key_lengths = false, mid_bf16 = false;
};

/* Reads the attributes; returns false with a reason naming the one it cannot honour. */
bool read_options(const opval_problem* p, options& o, char* reason, size_t size) {
  const std::string causal = attr(p, "causal"), mask = attr(p, "mask");
  if (causal == "top_left") o.causal = causal_kind::top_left;
  else if (causal == "bottom_right") o.causal = causal_kind::bottom_right;
  else if (causal != "none")
    return report(0, reason, size, "%s does not implement causal=%s", plugin_name, causal.c_str());
  if (mask != "none" && mask != "bias")
    return report(0, reason, size, "%s does not implement mask=%s", plugin_name, mask.c_str());
  o.bias = mask == "bias";
  // Features this kernel does not implement: refused, never computed without them.
  if (std::strtod(attr(p, "softcap"), nullptr) != 0)
    return report(0, reason, size, "%s does not implement softcap", plugin_name);
  for (const char* w : {"window_left", "window_right"}) {
    const std::string v = attr(p, w);
    if (!v.empty() && v != "-1") return report(0, reason, size, "%s does not implement a sliding window (%s=%s)",
                                               plugin_name, w, v.c_str());
  }
  const std::string mask_shape = attr(p, "mask_shape");
  if (!mask_shape.empty() && mask_shape != "lq_lk")
    return report(0, reason, size, "%s implements an [lq,lk] bias only, not mask_shape=%s", plugin_name,
                  mask_shape.c_str());
  o.key_lengths = std::strcmp(attr(p, "key_lengths"), "1") == 0;
  o.scale = std::strtod(attr(p, "scale"), nullptr);
  return true;
}

/* Checks the contract's types (src:acc:dst, no x/@) and its options (` mid=bf16` ...), both in
 * p->contract under ABI minor 1; sets o.mid_bf16. Returns false with a reason. */
bool read_contract(const opval_problem* p, options& o, char* reason, size_t size) {
  const std::string whole = p->contract;
  const std::string c = whole.substr(0, whole.find(' '));
  const size_t a = c.find(':'), b = c.rfind(':');
  const std::string src = c.substr(0, a), acc = c.substr(a + 1, b - a - 1), dst = c.substr(b + 1);
  auto io = [](const std::string& t) { return t == "f32" || t == "bf16"; };
  if (a == std::string::npos || a == b || !io(src) || acc != "f32" || !io(dst))
    return report(0, reason, size,
                  "%s implements Q/K/V f32 or bf16 with f32 accumulation and f32 or bf16 output "
                  "(e.g. bf16:f32:bf16), not %s", plugin_name, c.c_str());
  const char* d = whole.c_str() + c.size();  // the options, each ` key=value`
  for (const char* key : {" in_round=", " acc_round=", " dst_round=", " denorm=", " ulp="}) {
    if (const char* at = std::strstr(d, key))
      return report(0, reason, size, "%s rounds to nearest even with IEEE subnormals and libm expf; "
                    "contract option %.*s is not supported", plugin_name,
                    static_cast<int>(std::strcspn(at + 1, " ")), at + 1);
  }
  if (const char* at = std::strstr(d, " mid=")) {
    const std::string mid(at + 5, std::strcspn(at + 5, " "));
    if (mid != "f32" && mid != "bf16")
      return report(0, reason, size, "%s keeps P in f32 or rounds it to bf16, not mid=%s", plugin_name,
                    mid.c_str());
    o.mid_bf16 = mid == "bf16";
  }
  return true;
}

/* One (batch, head) job's read-only context. */
struct head_job {
  operand q, k, v, o, mask;
  int64_t b, hd, kvh;         // batch, query head, key/value head
  int64_t lq, lk, d, dv;
  int64_t key_end;            // keys j >= key_end are masked (key_lengths)
  float scale;
  const options* opt;

  /* One past the last key row i may see (causal limit and key length). */
  int64_t visible_end(int64_t i) const {
    int64_t end = key_end;
    if (opt->causal == causal_kind::top_left) end = std::min(end, i + 1);
    if (opt->causal == causal_kind::bottom_right) end = std::min(end, i + lk - lq + 1);
    return std::max<int64_t>(end, 0);
  }
};

/* Per-block scratch, reused across blocks (the "SRAM" tiles of FlashAttention). */
struct scratch {
  std::vector<float> qt, kt, vt, s, acc, m, l;
  scratch(int64_t d, int64_t dv)
      : qt(block_q * d), kt(block_k * d), vt(block_k * dv), s(block_k), acc(block_q * dv), m(block_q),
        l(block_q) {}
};

/* The largest of the row's logits, NaN if any is NaN (std::max would drop it, and a NaN
 * logit must make the row NaN). */
float row_max(const float* s, int64_t n, float m) {
  for (int64_t c = 0; c < n; ++c)
    if (s[c] > m || s[c] != s[c]) m = s[c];
  return m;
}

/* Online-softmax update of query row r with the logits s[0..cols) of one key block whose
 * V rows are vt: rescale l and acc to the new maximum, add exp(s - m_new) and P.V. */
void online_update(const head_job& job, scratch& w, int64_t r, int64_t cols) {
  float* acc = w.acc.data() + r * job.dv;
  const float m_new = row_max(w.s.data(), cols, w.m[r]);
  if (m_new == neg_inf) return;  // nothing visible in this row so far
  const float alpha = std::exp(w.m[r] - m_new);  // 0 for the first visible block
  float row_sum = 0;
  for (int64_t c = 0; c < cols; ++c) row_sum += w.s[c] = std::exp(w.s[c] - m_new);
#if FLASH_PLANTED_BUG
  w.l[r] = w.l[r] + row_sum;  // BUG: the old sum is relative to the old maximum
#else
  w.l[r] = alpha * w.l[r] + row_sum;
#endif
  if (alpha != 1.0f)
    for (int64_t e = 0; e < job.dv; ++e) acc[e] *= alpha;
  for (int64_t c = 0; c < cols; ++c) {
    const float p = job.opt->mid_bf16 ? round_to_bf16(w.s[c]) : w.s[c];
    if (p == 0.0f) continue;  // masked (or underflowed) keys add nothing; V is not read
    const float* vr = w.vt.data() + c * job.dv;
    for (int64_t e = 0; e < job.dv; ++e) acc[e] += p * vr[e];
  }
  w.m[r] = m_new;
}

/* Loads rows [j0, j0 + n) of a [.., L, D] operand into a dense f32 tile. */
void load_tile(const operand& x, int64_t b, int64_t h, int64_t j0, int64_t n, int64_t cols, float* tile) {
  for (int64_t j = 0; j < n; ++j) {
    const int64_t base = x.row(b, h, j0 + j);
    for (int64_t e = 0; e < cols; ++e) tile[j * cols + e] = x.load(base + e * x.stride(3));
  }
}

/* Logits of query row r (global i) against the key block [j0, j0 + cols) into w.s. */
void block_logits(const head_job& job, scratch& w, int64_t r, int64_t i, int64_t j0, int64_t cols) {
  const int64_t end = job.visible_end(i);
  const float* qr = w.qt.data() + r * job.d;
  for (int64_t c = 0; c < cols; ++c) {
    const int64_t j = j0 + c;
    if (j >= end) {
      w.s[c] = neg_inf;
      continue;
    }
    const float* kr = w.kt.data() + c * job.d;
    float dot = 0;
    for (int64_t e = 0; e < job.d; ++e) dot += qr[e] * kr[e];
    float logit = dot * job.scale;
    if (job.opt->bias) logit += job.mask.load(i * job.mask.stride(0) + j * job.mask.stride(1));
    w.s[c] = logit;
  }
}

/* One block of query rows [i0, i0 + rows) of one (batch, head): stream over key blocks. */
void query_block(const head_job& job, scratch& w, int64_t i0, int64_t rows) {
  load_tile(job.q, job.b, job.hd, i0, rows, job.d, w.qt.data());
  std::fill(w.m.begin(), w.m.end(), neg_inf);
  std::fill(w.l.begin(), w.l.end(), 0.0f);
  std::fill(w.acc.begin(), w.acc.end(), 0.0f);
  // visible_end grows with i: the last row sees the most keys; later blocks are skipped.
  const int64_t key_stop = job.visible_end(i0 + rows - 1);
  for (int64_t j0 = 0; j0 < key_stop; j0 += block_k) {
    const int64_t cols = std::min(block_k, key_stop - j0);
    load_tile(job.k, job.b, job.kvh, j0, cols, job.d, w.kt.data());
    load_tile(job.v, job.b, job.kvh, j0, cols, job.dv, w.vt.data());
    for (int64_t r = 0; r < rows; ++r) {
      if (job.visible_end(i0 + r) <= j0) continue;  // block entirely masked for this row
      block_logits(job, w, r, i0 + r, j0, cols);
      online_update(job, w, r, cols);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* acc = w.acc.data() + r * job.dv;
    const float l = w.l[r];
    // No visible key: exactly 0 (FlashAttention's convention); a NaN l keeps the row NaN.
    const int64_t base = job.o.row(job.b, job.hd, i0 + r);
    for (int64_t e = 0; e < job.dv; ++e) job.o.store(base + e * job.o.stride(3), l == 0.0f ? 0.0f : acc[e] / l);
  }
}

bool float_type(int32_t t) { return t == OPVAL_DTYPE_F32 || t == OPVAL_DTYPE_BF16; }

/* Checks the operands against the options; returns a message or "". */
std::string check_operands(const options& o, const opval_tensor* in, size_t n_in, const opval_tensor* out,
                           size_t n_out) {
  const size_t expected = 3 + o.bias + o.key_lengths;
  if (n_in != expected || n_out != 1)
    return "expected " + std::to_string(expected) + " inputs (q, k, v[, mask][, key_lengths]) and 1 output, got " +
           std::to_string(n_in) + " and " + std::to_string(n_out);
  for (size_t i = 0; i < 3; ++i)
    if (in[i].rank != 4 || !float_type(in[i].dtype)) return "q, k and v must be rank-4 f32 or bf16 tensors";
  if (out[0].rank != 4 || !float_type(out[0].dtype)) return "o must be a rank-4 f32 or bf16 tensor";
  if (o.bias && (in[3].rank != 2 || !float_type(in[3].dtype))) return "mask must be a rank-2 f32 or bf16 tensor";
  if (o.key_lengths && (in[n_in - 1].rank != 1 || in[n_in - 1].dtype != OPVAL_DTYPE_I32))
    return "key_lengths must be a rank-1 i32 tensor";
  return "";
}

int run(const opval_problem* p, const opval_tensor* in, size_t n_in, opval_tensor* out, size_t n_out, char* error,
        size_t error_size) {
  options o;
  if (!read_options(p, o, error, error_size) || !read_contract(p, o, error, error_size)) return 1;
  const std::string bad = check_operands(o, in, n_in, out, n_out);
  if (!bad.empty()) return report(1, error, error_size, "%s: %s", plugin_name, bad.c_str());
  const int64_t batch = in[0].shape[0], h = in[0].shape[1], hkv = in[1].shape[1];
  head_job job{};
  job.q = {&in[0]}, job.k = {&in[1]}, job.v = {&in[2]}, job.o = {&out[0]};
  job.mask = {o.bias ? &in[3] : nullptr};
  job.lq = in[0].shape[2], job.lk = in[1].shape[2], job.d = in[0].shape[3], job.dv = in[2].shape[3];
  job.scale = static_cast<float>(o.scale == 0 ? 1.0 / std::sqrt(static_cast<double>(job.d)) : o.scale);
  job.opt = &o;
  if (hkv < 1 || h % hkv != 0)
    return report(1, error, error_size, "%s: h=%lld is not a multiple of hkv=%lld", plugin_name,
                  static_cast<long long>(h), static_cast<long long>(hkv));
  scratch w(job.d, job.dv);
  for (job.b = 0; job.b < batch; ++job.b) {
    job.key_end = job.lk;
    if (o.key_lengths) {
      const opval_tensor& kl = in[n_in - 1];
      job.key_end = std::min<int64_t>(job.lk, static_cast<const int32_t*>(kl.data)[job.b * kl.strides[0]]);
    }
    for (job.hd = 0; job.hd < h; ++job.hd) {
      job.kvh = job.hd / (h / hkv);  // consecutive query heads share one kv head
      for (int64_t i0 = 0; i0 < job.lq; i0 += block_q) query_block(job, w, i0, std::min(block_q, job.lq - i0));
    }
  }
  return 0;
}

}  // namespace

OPVAL_PLUGIN_EXPORT uint32_t opval_plugin_abi_version(void) { return OPVAL_PLUGIN_ABI_VERSION; }

OPVAL_PLUGIN_EXPORT uint32_t opval_plugin_abi_minor_version(void) { return OPVAL_PLUGIN_ABI_MINOR_VERSION; }

OPVAL_PLUGIN_EXPORT const char* opval_plugin_name(void) { return plugin_name; }

OPVAL_PLUGIN_EXPORT int opval_plugin_supports(const opval_problem* p, char* reason, size_t reason_size) {
  try {
    if (std::strcmp(p->op, "attention") != 0)
      return report(OPVAL_PLUGIN_UNIMPLEMENTED, reason, reason_size, "%s implements attention only, not %s",
                    plugin_name, p->op);
    options o;
    if (!read_options(p, o, reason, reason_size) || !read_contract(p, o, reason, reason_size))
      return OPVAL_PLUGIN_UNIMPLEMENTED;
    return OPVAL_PLUGIN_SUPPORTED;
  } catch (const std::exception& e) {
    return report(OPVAL_PLUGIN_SKIPPED, reason, reason_size, "%s: %s", plugin_name, e.what());
  }
}

OPVAL_PLUGIN_EXPORT int opval_plugin_execute(const opval_problem* p, const opval_tensor* in, size_t n_in,
                                             opval_tensor* out, size_t n_out, void* stream, char* error,
                                             size_t error_size) {
  (void)stream;
  try {
    return run(p, in, n_in, out, n_out, error, error_size);
  } catch (const std::bad_alloc&) {
    return report(1, error, error_size, "%s: out of memory for the block scratch", plugin_name);
  } catch (const std::exception& e) {
    return report(1, error, error_size, "%s: %s", plugin_name, e.what());
  }
}
