#include "core/memory_checks.hpp"

#include <cstring>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include "opval/error.hpp"

namespace opval::detail {
namespace {

// The storage bytes of t from its first element's allocation start to its last element.
std::span<const std::byte> storage_span(const tensor& t) {
  const auto es = static_cast<std::int64_t>(t.element_size());
  std::int64_t last = t.offset();
  for (int i = 0; i < t.rank(); ++i)
    if (t.shape()[i] > 0) last += (t.shape()[i] - 1) * t.strides()[i];
  const auto* base = static_cast<const std::byte*>(t.data()) - t.offset() * es;
  return {base, static_cast<std::size_t>((last + 1) * es)};
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

}  // namespace

void poison(tensor& t, int pass) {
  const std::size_t es = t.element_size();
  const std::uint64_t bits = poison_bits(t.type(), pass);
  std::span<const std::byte> s = storage_span(t);
  auto* p = const_cast<std::byte*>(s.data());
  for (std::size_t off = 0; off + es <= s.size(); off += es) std::memcpy(p + off, &bits, es);
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

std::uint64_t storage_hash(const tensor& t) {
  std::span<const std::byte> s = storage_span(t);
  return XXH3_64bits(s.data(), s.size());
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

}  // namespace opval::detail
