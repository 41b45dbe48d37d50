#include "core/memory_checks.hpp"

#include <cstring>
#include <span>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <algorithm>

#include <omp.h>

#include "core/backend_run.hpp"
#include "core/output_judging.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "core/threading.hpp"

namespace opval::detail {
namespace {

// The storage bytes of t from its allocation's start to its last element (none when t has no
// element: its storage is a placeholder no kernel may touch).
std::span<const std::byte> storage_span(const tensor& t) {
  const std::size_t before = static_cast<std::size_t>(t.offset()) * t.element_size();
  const auto* base = static_cast<const std::byte*>(t.data()) - before;
  return {base, t.numel() == 0 ? 0 : before + t.span_bytes()};
}

std::uint64_t load_bits(const std::byte* p, std::size_t size) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian: the low bytes hold the element
  return v;
}

// Calls f(linear, address in a, address in b) for every logical element of a and b (same
// shape and element size) in row-major order; strides are stepped with an odometer so that
// non-contiguous tensors cost no division per element.
template <class F>
void for_each_element(const tensor& a, const tensor& b, F&& f) {
  const auto es = static_cast<std::int64_t>(a.element_size());
  const auto* base_a = static_cast<const std::byte*>(a.data());
  const auto* base_b = static_cast<const std::byte*>(b.data());
  const std::int64_t n = a.numel();
  if (n == 0) return;
  if (a.is_contiguous() && b.is_contiguous()) {
    for (std::int64_t i = 0; i < n; ++i) f(i, base_a + i * es, base_b + i * es);
    return;
  }
  const int rank = a.rank();
  dims index(rank, 0);
  std::int64_t off_a = 0, off_b = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, base_a + off_a * es, base_b + off_b * es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < a.shape()[d]) {
        off_a += a.strides()[d];
        off_b += b.strides()[d];
        break;
      }
      off_a -= (a.shape()[d] - 1) * a.strides()[d];
      off_b -= (b.shape()[d] - 1) * b.strides()[d];
      index[d] = 0;
    }
  }
}

// The poison bits of one element of type t for `pass`.
std::uint64_t poison_bits(dtype t, int pass) {
  switch (storage_type(t)) {
    case dtype::f64: return pass == 0 ? 0x7ff4a5a5a5a5a5a5ull : 0xfff5a55a5aa55a5aull;
    case dtype::f32: return pass == 0 ? 0x7fa5a5a5u : 0xffb55a5au;  // quiet bit clear: signalling
    case dtype::f16: return pass == 0 ? 0x7d5au : 0xfd3cu;
    case dtype::bf16: return pass == 0 ? 0x7fa5u : 0xffb3u;
    case dtype::i32: return pass == 0 ? 0xa5a5a5a5u : 0x5a5a5a5au;
    case dtype::i64: return pass == 0 ? 0xa5a5a5a5a5a5a5a5ull : 0x5a5a5a5a5a5a5a5aull;
    default: return pass == 0 ? 0xa5u : 0x5au;  // 1-byte types have no spare NaN payload
  }
}

void record(element_finding& f, std::int64_t linear, std::uint64_t a, std::uint64_t b) {
  if (f.count++ == 0) f.first = linear, f.bits_a = a, f.bits_b = b;
}

// Calls f(linear, bits in a, bits in b) for every logical element of a and b.
template <class F>
void for_each_pair(const tensor& a, const tensor& b, F&& f) {
  if (a.shape() != b.shape() || a.element_size() != b.element_size())
    throw error("bitwise comparison of tensors of different shapes or types");
  const std::size_t es = a.element_size();
  for_each_element(a, b, [&](std::int64_t i, const std::byte* pa, const std::byte* pb) {
    f(i, load_bits(pa, es), load_bits(pb, es));
  });
}

// Whether the kernel gives the same bits again whenever its output buffer starts the same: then
// what differed between the two poisoned runs came from the buffers' previous contents.
bool repeats_per_prefill(const tensor& pass0, const tensor& again0, const tensor& pass1,
                         const tensor& again1) {
  return bitwise_differences(pass0, -1, again0, -1).count == 0 && bitwise_differences(pass1, -1, again1, -1).count == 0;
}

// Calls f(words, count) with t's whole storage as an array of its element-sized words.
template <class F>
void with_words(std::span<const std::byte> s, std::size_t es, F&& f) {
  switch (es) {
    case 8: return f(reinterpret_cast<const std::uint64_t*>(s.data()), s.size() / 8);
    case 4: return f(reinterpret_cast<const std::uint32_t*>(s.data()), s.size() / 4);
    case 2: return f(reinterpret_cast<const std::uint16_t*>(s.data()), s.size() / 2);
    default: return f(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  }
}

}  // namespace

void poison(tensor& t, int pass) {
  const std::uint64_t bits = poison_bits(t.type(), pass);
  with_words(storage_span(t), t.element_size(), [&]<class W>(const W* words, std::size_t count) {
    std::fill(const_cast<W*>(words), const_cast<W*>(words) + count, static_cast<W>(bits));
  });
}

element_finding still_poisoned(const tensor& t, int pass) {
  const std::uint64_t bits = poison_bits(t.type(), pass);
  element_finding f;
  if (t.is_contiguous()) {  // the common case, one vectorised count over the words
    std::size_t found = 0;
    with_words(storage_span(t), t.element_size(), [&]<class W>(const W* words, std::size_t count) {
      const W poison_word = static_cast<W>(bits);
#pragma omp simd reduction(+ : found)
      for (std::size_t i = 0; i < count; ++i) found += words[i] == poison_word;
    });
    if (found == 0) return f;
  }
  for_each_pair(t, t, [&](std::int64_t i, std::uint64_t a, std::uint64_t) {
    if (a == bits) record(f, i, a, a);
  });
  return f;
}

element_finding never_written(const tensor& pass0, const tensor& pass1) {
  const std::uint64_t p0 = poison_bits(pass0.type(), 0), p1 = poison_bits(pass1.type(), 1);
  element_finding f;
  for_each_pair(pass0, pass1, [&](std::int64_t i, std::uint64_t a, std::uint64_t b) {
    if (a == p0 && b == p1) record(f, i, a, b);
  });
  return f;
}

element_finding bitwise_differences(const tensor& a, int a_pass, const tensor& b, int b_pass) {
  const std::uint64_t pa = a_pass < 0 ? 0 : poison_bits(a.type(), a_pass);
  const std::uint64_t pb = b_pass < 0 ? 0 : poison_bits(b.type(), b_pass);
  const bool skip_unwritten = a_pass >= 0 && b_pass >= 0 && a_pass != b_pass;
  element_finding f;
  for_each_pair(a, b, [&](std::int64_t i, std::uint64_t x, std::uint64_t y) {
    if (x == y || (skip_unwritten && x == pa && y == pb)) return;
    record(f, i, x, y);
  });
  return f;
}

bool same_storage(const tensor& a, const tensor& b) {
  std::span<const std::byte> sa = storage_span(a), sb = storage_span(b);
  return a.strides() == b.strides() && sa.size() == sb.size() && std::memcmp(sa.data(), sb.data(), sa.size()) == 0;
}

// The hash of a tensor's storage; only compared with itself, before and after a kernel run. A
// large tensor is hashed in fixed chunks on every thread and the chunks' hashes hashed (a 64 MiB
// input: 12 ms instead of 25 on two cores).
std::uint64_t storage_hash(const tensor& t) {
  std::span<const std::byte> s = storage_span(t);
  constexpr std::size_t chunk = std::size_t{4} << 20;
  if (s.size() <= 2 * chunk) return XXH3_64bits(s.data(), s.size());
  const std::int64_t chunks = std::int64_t((s.size() + chunk - 1) / chunk);
  std::vector<XXH64_hash_t> hashes(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::size_t at = std::size_t(c) * chunk;
    hashes[std::size_t(c)] = XXH3_64bits(s.data() + at, std::min(chunk, s.size() - at));
  }
  return XXH3_64bits(hashes.data(), hashes.size() * sizeof(XXH64_hash_t));
}

element_finding changed_elements(const tensor& now, const tensor& original) {
  element_finding f;
  for_each_pair(now, original, [&](std::int64_t i, std::uint64_t a, std::uint64_t b) {
    if (a != b) record(f, i, a, b);
  });
  return f;
}

std::string describe_first(const tensor& t, const element_finding& f) {
  const int digits = static_cast<int>(t.element_size()) * 2;
  return fmt::format("[{}] ({:#0{}x} vs {:#0{}x})", fmt::join(t.unravel(f.first), ","), f.bits_a, digits + 2,
                     f.bits_b, digits + 2);
}

kernel_checks::kernel_checks(const problem& p, const run_options& o)
    : p_(p), o_(o), alloc_(o.guard ? shared_guarded_allocator(o.guard_at, o.guard_tight) : host_allocator()) {}

std::vector<tensor> kernel_checks::inputs(const std::vector<operand>& ops) { return make(ops, "input"); }

std::vector<tensor> kernel_checks::outputs(const std::vector<operand>& ops, int pass) {
  std::vector<tensor> outs = make(ops, "output");
  if (o_.poison_check)
    for (auto& t : outs) poison(t, pass);
  return outs;
}

void kernel_checks::remember_inputs(const std::vector<tensor>& ins, const std::vector<operand>& ops) {
  if (!o_.input_check) return;
  for (std::size_t i = 0; i < ins.size(); ++i) watched_.push_back({ins[i], ops[i].name, storage_hash(ins[i])});
}

execution_info kernel_checks::run(backend& b, std::span<const tensor> ins, std::span<tensor> outs,
                                  backend_run_times* times) {
  execution_info info;
  try {
    info = run_backend(b, p_, ins, outs, times);
  } catch (const declined&) {
    // A kernel that declines may have written before it did: its tensors are checked all the same.
    check_after_run(ins, outs);
    throw;
  }
  check_after_run(ins, outs);
  return info;
}

void kernel_checks::check_after_run(std::span<const tensor> ins, std::span<tensor> outs) {
  if (o_.guard) {
    for (const auto& t : ins) check_canaries(t);
    for (const auto& t : outs) check_canaries(t);
  }
  for (auto& w : watched_) check_input(w);
}

void kernel_checks::compare_passes(backend& b, std::span<const tensor> ins, const std::vector<operand>& ops,
                                   const std::vector<tensor>& pass0, const std::vector<tensor>& pass1) {
  std::optional<std::vector<tensor>> again0, again1;  // the reruns, made once for every output
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (same_storage(pass0[i], pass1[i])) continue;
    note_never_written(ops[i], pass0[i], never_written(pass0[i], pass1[i]));
    if (!must_repeat()) continue;
    const element_finding d = bitwise_differences(pass0[i], 0, pass1[i], 1);
    if (!d.count) continue;
    if (!again0) {
      // Pass 1's pre-fill first: a kernel that merely alternates cannot then look repeatable.
      again1 = outputs(ops, 1);
      run(b, ins, *again1);
      again0 = outputs(ops, 0);
      run(b, ins, *again0);
    }
    add(repeats_per_prefill(pass0[i], (*again0)[i], pass1[i], (*again1)[i])
            ? fmt::format("output not overwritten: element {} of output '{}' depends on the buffer's previous "
                          "contents ({} of {} elements differ between runs whose output buffers started with "
                          "different contents, and repeat bitwise when they start alike)",
                          format_index(pass0[i].unravel(d.first)), ops[i].name, d.count, pass0[i].numel())
            : fmt::format("nondeterministic: output '{}' differs bitwise between two runs on the same inputs in "
                          "{} of {} elements, first at {}", ops[i].name, d.count, pass0[i].numel(),
                          describe_first(pass0[i], d)));
  }
}

void kernel_checks::note_never_written(const operand& op, const tensor& t, const element_finding& nw) {
  if (nw.count)
    add(fmt::format("output '{}': {} of {} elements never written (first at {})", op.name, nw.count, t.numel(),
                    format_index(t.unravel(nw.first))));
}

void kernel_checks::check_one_pass(const std::vector<operand>& ops, const std::vector<tensor>& pass0) {
  if (!o_.poison_check) return;
  for (std::size_t i = 0; i < ops.size(); ++i) note_never_written(ops[i], pass0[i], still_poisoned(pass0[i], 0));
}

void kernel_checks::compare_thread_counts(backend& b, std::span<const tensor> ins, const std::vector<operand>& ops,
                                          const std::vector<tensor>& first) {
  if (!must_repeat()) return;
  const int default_threads = omp_get_max_threads();
  for (int n : o_.threads) {
    std::vector<tensor> outs = outputs(ops, 0);
    {
      omp_threads_scope scope(n);
      run(b, ins, outs);
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (same_storage(first[i], outs[i])) continue;
      if (auto d = bitwise_differences(first[i], 0, outs[i], 0); d.count)
        add(fmt::format("nondeterministic across thread counts: output '{}' with {} threads differs bitwise from "
                        "the run with {} in {} of {} elements, first at {}", ops[i].name, n, default_threads,
                        d.count, first[i].numel(), describe_first(first[i], d)));
    }
  }
}

std::string kernel_checks::findings() const { return fmt::format("{}", fmt::join(findings_, "; ")); }

std::vector<tensor> kernel_checks::make(const std::vector<operand>& ops, const char* role) {
  std::vector<tensor> ts = allocate(ops, alloc_);
  if (o_.guard)
    for (std::size_t i = 0; i < ts.size(); ++i) label_guarded_region(ts[i].data(), ops[i].name, fmt::format("{} {}", role, i));
  return ts;
}

// Repeats must match bitwise unless the contract allows otherwise or an input was written
// (the runs then had different inputs).
bool kernel_checks::must_repeat() const { return p_.dt.deterministic && !input_written_; }

void kernel_checks::add(std::string finding) {
  if (std::find(findings_.begin(), findings_.end(), finding) == findings_.end()) findings_.push_back(std::move(finding));
}

void kernel_checks::check_canaries(const tensor& t) {
  if (auto damage = check_guard_canaries(t.data())) add(*damage);
}

// The old values cannot be read back after the fact; the fill is deterministic, so a fresh
// fill from the same seed shows which elements changed.
void kernel_checks::check_input(watched_input& w) {
  const std::uint64_t now = storage_hash(w.t);
  if (now == w.hash) return;
  w.hash = now;  // report each input once
  input_written_ = true;
  const op_spec& spec = p_.spec();
  std::vector<operand> ops = spec.inputs(p_);
  std::vector<tensor> fresh = allocate(ops);
  spec.fill(p_, o_.seed, fresh);
  const auto k = static_cast<std::size_t>(
      std::find_if(ops.begin(), ops.end(), [&](const operand& o) { return o.name == w.name; }) - ops.begin());
  if (k >= ops.size()) return add(fmt::format("kernel wrote input '{}'", w.name));
  element_finding c = changed_elements(w.t, fresh[k]);
  if (c.count == 0) return add(fmt::format("kernel wrote input '{}' outside its elements (padding bytes)", w.name));
  add(fmt::format("kernel wrote input '{}': {} of {} elements changed, first at {}", w.name, c.count, w.t.numel(),
                  describe_first(w.t, c)));
}

void check_leaks_into(const problem& p, backend& b, int runs, std::span<const tensor> ins, std::span<tensor> outs,
                      case_result& r) {
  r.memory.leak = check_leaks(b, p, ins, outs, runs);
  if (!r.memory.leak.leaks) return;
  r.v.reason = r.v.st == state::passed ? r.memory.leak.finding : r.v.reason + "; it also " + r.memory.leak.finding;
  r.v.st = worst_state(r.v.st, state::failed);
}

}  // namespace opval::detail
