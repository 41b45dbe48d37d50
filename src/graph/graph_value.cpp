// The graph reference's values: construction, exact decoding of stored arrays, indices.
#include "graph/graph_value.hpp"

#include <cmath>
#include <atomic>
#include <cstring>

#include <unistd.h>

#include <fmt/format.h>

#include "core/size_product.hpp"
#include "opval/error.hpp"

namespace opval::graph {
namespace {

template <class T>
double load(const std::byte* at) {
  T v;
  std::memcpy(&v, at, sizeof v);  // little-endian storage, as on x86-64
  return static_cast<double>(v);
}

// Element `i` of little-endian storage of `type`, exactly.
double element(dtype type, const std::byte* data, std::size_t i) {
  const std::size_t size = static_cast<std::size_t>(traits(type).size_bytes);
  const std::byte* at = data + i * size;
  switch (type) {
    case dtype::f64: return load<double>(at);
    case dtype::f32: return load<float>(at);
    case dtype::i8: return load<std::int8_t>(at);
    case dtype::u8: return load<std::uint8_t>(at);
    case dtype::i32: return load<std::int32_t>(at);
    case dtype::i64: return load<std::int64_t>(at);
    case dtype::boolean: return load<std::uint8_t>(at) != 0 ? 1.0 : 0.0;
    default: {
      std::uint64_t bits = 0;
      std::memcpy(&bits, at, size);
      return decode(type, bits);
    }
  }
}

std::int64_t half_of_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page / 2 : std::int64_t{1} << 33;
}

std::atomic<std::int64_t>& value_limit() {
  static std::atomic<std::int64_t> limit{half_of_memory()};
  return limit;
}

}  // namespace

std::int64_t max_value_bytes() { return value_limit().load(); }
void set_max_value_bytes(std::int64_t bytes) { value_limit().store(bytes); }

void check_value_size(const dims& shape) {
  for (const std::int64_t d : shape)
    if (d < 0) throw error(fmt::format("a value of shape {} has a negative extent", to_string(shape)));
  const std::int64_t count = element_count(shape);
  if (count > max_value_bytes() / 8)
    throw error(fmt::format("a value of shape {} ({} elements) is larger than the graph reference holds ({} MiB as f64)",
                            to_string(shape), count, max_value_bytes() >> 20));
}

value make_value(dtype type, dims shape, std::vector<double> data) {
  if (static_cast<std::int64_t>(data.size()) != element_count(shape))
    throw error(fmt::format("a value of shape {} given {} elements", to_string(shape), data.size()));
  return value{type, std::move(shape), std::move(data)};
}

value zeros(dtype type, const dims& shape) {
  check_value_size(shape);
  return value{type, shape, std::vector<double>(static_cast<std::size_t>(element_count(shape)), 0.0)};
}

value value_of(dtype type, const dims& shape, std::span<const std::byte> bytes, std::string_view name) {
  if (type == dtype::tf32) type = dtype::f32;
  for (const std::int64_t d : shape)
    if (d < 0) throw error(fmt::format("array '{}' has the extent {}", name, d));
  check_value_size(shape);
  const std::int64_t count = element_count(shape);
  const std::int64_t expected = size_product(count, traits(type).size_bytes, shape);
  if (static_cast<std::int64_t>(bytes.size()) != expected)
    throw error(fmt::format("array '{}' holds {} bytes for shape {} of {} ({} bytes)", name, bytes.size(),
                            to_string(shape), to_string(type), expected));
  std::vector<double> data(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = element(type, bytes.data(), i);
  return value{type, shape, std::move(data)};
}

std::int64_t as_index(double v) {
  constexpr double limit = 4611686018427387904.0;  // 2^62
  if (std::isnan(v)) return 0;
  return static_cast<std::int64_t>(std::fmax(-limit, std::fmin(limit, v)));
}

double wrapped_integer(double x, dtype t) {
  if (is_float(t)) return x;
  const std::int64_t v = as_index(x);
  switch (t) {
    case dtype::boolean: return v != 0 ? 1.0 : 0.0;
    case dtype::i8: return static_cast<std::int8_t>(v);
    case dtype::u8: return static_cast<std::uint8_t>(v);
    case dtype::i32: return static_cast<std::int32_t>(v);
    case dtype::i4: return static_cast<double>(((v & 0xf) ^ 0x8) - 0x8);  // the low nibble, sign-extended
    case dtype::u4: return static_cast<double>(v & 0xf);
    default: return static_cast<double>(v);
  }
}

std::vector<std::int64_t> indices_of(const value& v) {
  std::vector<std::int64_t> out;
  out.reserve(v.data.size());
  for (const double x : v.data) out.push_back(as_index(x));
  return out;
}

std::optional<int> normalized_axis(std::int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

dims unravel(std::int64_t linear, const dims& shape) {
  dims index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

std::int64_t position(std::span<const std::int64_t> index, const dims& strides) {
  std::int64_t at = 0;
  for (std::size_t d = 0; d < index.size(); ++d) at += index[d] * strides[d];
  return at;
}

value value_of_tensor(const tensor& t, dtype as) { return value{as, t.shape(), t.to_vector()}; }

tensor to_tensor(const value& v) {
  tensor t(dtype::f64, v.shape);
  t.assign(v.data);
  return t;
}

}  // namespace opval::graph
