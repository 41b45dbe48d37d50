#include "opval/tensor.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <numeric>

#include "core/huge_pages.hpp"
#include "core/size_product.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

class aligned_host_allocator final : public allocator {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment) override {
    void* p = ::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t(aligned_to(bytes, alignment)));
    advise_huge_pages(p, bytes);
    return p;
  }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept override {
    ::operator delete(p, std::align_val_t(aligned_to(bytes, alignment)));
  }
  std::string name() const override { return "host"; }

 private:
  // Large buffers start on a 2 MiB boundary, so all of them can be in huge pages: the fp64
  // reference and the bounds of a 1024^2 output are 8 MiB each, first touched once per case.
  static std::size_t aligned_to(std::size_t bytes, std::size_t alignment) {
    return bytes >= huge_page_threshold ? std::max(alignment, huge_page_bytes) : alignment;
  }
};

std::uint64_t load_bits(const std::byte* p, std::size_t size) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, p, size);  // little-endian host: the low bytes hold the pattern
  return bits;
}

void store_bits(std::byte* p, std::size_t size, std::uint64_t bits) { std::memcpy(p, &bits, size); }

// Calls f(i, a, b) for every logical element i in row-major order with its offsets in
// elements under two stride sets of `shape`. An odometer over the index replaces the division
// per dimension and element that at() needs.
template <class F>
void for_each_element(const dims& shape, const dims& strides_a, const dims& strides_b, F&& f) {
  const std::int64_t n = element_count(shape);
  if (n == 0) return;
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) return f(std::int64_t{0}, std::int64_t{0}, std::int64_t{0});
  const std::int64_t inner = shape[rank - 1], step_a = strides_a[rank - 1], step_b = strides_b[rank - 1];
  dims index(rank, 0);
  std::int64_t a = 0, b = 0;
  for (std::int64_t i = 0; i < n; i += inner) {
    for (std::int64_t j = 0; j < inner; ++j) f(i + j, a + j * step_a, b + j * step_b);
    for (int d = rank - 2; d >= 0; --d) {
      a += strides_a[d];
      b += strides_b[d];
      if (++index[d] < shape[d]) break;
      a -= strides_a[d] * shape[d];
      b -= strides_b[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

allocator& host_allocator() {
  static aligned_host_allocator instance;
  return instance;
}

std::int64_t size_product(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw error(std::string(what) + " has more than 2^63 elements");
  return r;
}

std::int64_t size_product(std::int64_t a, std::int64_t b, const dims& shape) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    return size_product(a, b, std::string_view("shape " + to_string(shape)));
  return r;
}

dims row_major_strides(const dims& shape) {
  dims strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    strides[i] = size_product(strides[i + 1], std::max<std::int64_t>(shape[i + 1], 1), shape);
  return strides;
}

dims padded_strides(const dims& shape, std::int64_t ld) {
  if (shape.empty()) return {};
  if (ld < shape.back())
    throw error("leading dimension " + std::to_string(ld) + " is smaller than the row length " +
                std::to_string(shape.back()));
  dims strides(shape.size(), 1);
  if (shape.size() >= 2) strides[shape.size() - 2] = ld;
  for (int i = static_cast<int>(shape.size()) - 3; i >= 0; --i)
    strides[i] = size_product(strides[i + 1], std::max<std::int64_t>(shape[i + 1], 1), shape);
  return strides;
}

dims channels_last_strides(const dims& shape) {
  if (shape.size() < 3) return row_major_strides(shape);
  dims strides(shape.size(), 0);
  std::int64_t stride = 1;
  strides[1] = stride;
  stride = size_product(stride, std::max<std::int64_t>(shape[1], 1), shape);
  for (std::size_t d = shape.size() - 1; d >= 2; --d) {
    strides[d] = stride;
    stride = size_product(stride, std::max<std::int64_t>(shape[d], 1), shape);
  }
  strides[0] = stride;
  return strides;
}

std::int64_t element_count(const dims& shape) {
  std::int64_t n = 1;
  for (std::int64_t e : shape) n = size_product(n, e, shape);
  return n;
}

std::string to_string(const dims& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

tensor::tensor(dtype t, dims shape, const layout& lay, allocator& alloc)
    : type_(t), shape_(std::move(shape)), offset_(lay.offset) {
  for (auto e : shape_)
    if (e < 0) throw error("negative extent in shape " + to_string(shape_));
  strides_ = lay.strides.empty() ? row_major_strides(shape_) : lay.strides;
  if (strides_.size() != shape_.size())
    throw error("strides rank does not match shape " + to_string(shape_));
  if (offset_ < 0) throw error("negative tensor offset");
  std::int64_t last = offset_;
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (strides_[i] < 0) throw error("negative strides are not supported");
    if (shape_[i] > 0) last += (shape_[i] - 1) * strides_[i];
  }
  std::size_t bytes = numel() == 0 ? element_size() : (last + 1) * element_size();
  storage_bytes_ = bytes;
  if (lay.alignment == 0 || !std::has_single_bit(lay.alignment))
    throw error("tensor alignment " + std::to_string(lay.alignment) + " is not a power of two");
  std::size_t alignment = std::max<std::size_t>(lay.alignment, alignof(std::max_align_t));
  void* p = alloc.allocate(bytes, alignment);
  std::memset(p, 0, bytes);
  allocator* owner = &alloc;
  storage_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [owner, bytes, alignment](std::byte* q) {
    owner->deallocate(q, bytes, alignment);
  });
}

std::size_t tensor::element_size() const { return traits(type_).size_bytes; }

bool tensor::is_contiguous() const {
  // Extent-1 dimensions are never stepped over, so their strides do not matter (slices and
  // permutations often leave odd strides there).
  std::int64_t expected = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape_[i] == 0) return true;
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

std::size_t tensor::span_bytes() const {
  if (numel() == 0) return 0;
  std::int64_t last = 0;
  for (int d = 0; d < rank(); ++d) last += (shape_[d] - 1) * strides_[d];
  return static_cast<std::size_t>(last + 1) * element_size();
}

void* tensor::data() { return storage_.get() + offset_ * element_size(); }
const void* tensor::data() const { return storage_.get() + offset_ * element_size(); }

std::int64_t tensor::byte_offset_of(std::span<const std::int64_t> index) const {
  if (index.size() != shape_.size())
    throw error("index of rank " + std::to_string(index.size()) + " into a tensor of shape " +
                to_string(shape_));
  std::int64_t off = offset_;
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (index[i] < 0 || index[i] >= shape_[i]) throw error("index out of range for shape " + to_string(shape_));
    off += index[i] * strides_[i];
  }
  return off * static_cast<std::int64_t>(element_size());
}

std::int64_t tensor::byte_offset_of_linear(std::int64_t linear) const {
  if (linear < 0 || linear >= numel())
    throw error("element " + std::to_string(linear) + " is out of range for shape " + to_string(shape_));
  std::int64_t off = offset_;
  for (int i = rank() - 1; i >= 0; --i) {
    std::int64_t extent = shape_[i];
    off += (linear % extent) * strides_[i];
    linear /= extent;
  }
  return off * static_cast<std::int64_t>(element_size());
}

double tensor::get(std::span<const std::int64_t> index) const {
  return decode(type_, load_bits(storage_.get() + byte_offset_of(index), element_size()));
}

void tensor::set(std::span<const std::int64_t> index, double v, rounding r, overflow o) {
  store_bits(storage_.get() + byte_offset_of(index), element_size(), encode(type_, v, r, o));
}

double tensor::at(std::int64_t linear) const {
  return decode(type_, load_bits(storage_.get() + byte_offset_of_linear(linear), element_size()));
}

void tensor::set_at(std::int64_t linear, double v, rounding r, overflow o) {
  store_bits(storage_.get() + byte_offset_of_linear(linear), element_size(), encode(type_, v, r, o));
}

dims tensor::unravel(std::int64_t linear) const {
  if (linear < 0 || linear >= numel())
    throw error("element " + std::to_string(linear) + " is out of range for shape " + to_string(shape_));
  dims index(shape_.size());
  for (int i = rank() - 1; i >= 0; --i) {
    index[i] = linear % shape_[i];
    linear /= shape_[i];
  }
  return index;
}

tensor tensor::permute(std::span<const int> order) const {
  if (order.size() != shape_.size()) throw error("permutation rank does not match the tensor");
  tensor v = *this;
  std::vector<bool> seen(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    int d = order[i];
    if (d < 0 || d >= rank() || seen[d]) throw error("invalid permutation");
    seen[d] = true;
    v.shape_[i] = shape_[d];
    v.strides_[i] = strides_[d];
  }
  return v;
}

tensor tensor::transpose(int a, int b) const {
  if (a < 0 || a >= rank() || b < 0 || b >= rank())
    throw error("cannot transpose dimensions " + std::to_string(a) + " and " + std::to_string(b) +
                " of shape " + to_string(shape_));
  std::vector<int> order(shape_.size());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[a], order[b]);
  return permute(order);
}

tensor tensor::slice(int dim, std::int64_t begin, std::int64_t end, std::int64_t step) const {
  if (dim < 0 || dim >= rank() || step <= 0 || begin < 0 || end > shape_[dim] || begin > end)
    throw error("invalid slice of dimension " + std::to_string(dim) + " of shape " + to_string(shape_));
  tensor v = *this;
  v.offset_ += begin * strides_[dim];
  v.shape_[dim] = (end - begin + step - 1) / step;
  v.strides_[dim] *= step;
  return v;
}

tensor tensor::reshape(const dims& shape) const {
  if (!is_contiguous()) throw error("reshape of a non-contiguous tensor");
  if (std::any_of(shape.begin(), shape.end(), [](std::int64_t e) { return e < 0; }) ||
      element_count(shape) != numel())
    throw error("cannot reshape " + to_string(shape_) + " to " + to_string(shape));
  tensor v = *this;
  v.shape_ = shape;
  v.strides_ = row_major_strides(shape);
  return v;
}

tensor tensor::contiguous() const {
  tensor out(type_, shape_);
  const std::size_t size = element_size();
  const auto* src = static_cast<const std::byte*>(data());
  auto* dst = static_cast<std::byte*>(out.data());
  for_each_element(shape_, strides_, strides_, [&](std::int64_t i, std::int64_t off, std::int64_t) {
    std::memcpy(dst + i * size, src + off * size, size);
  });
  return out;
}

tensor tensor::to(dtype t, rounding r, overflow o) const {
  tensor out(t, shape_);
  const std::size_t size = element_size(), out_size = out.element_size();
  const auto* src = static_cast<const std::byte*>(data());
  auto* dst = static_cast<std::byte*>(out.data());
  for_each_element(shape_, strides_, strides_, [&](std::int64_t i, std::int64_t off, std::int64_t) {
    const double v = decode(type_, load_bits(src + off * size, size));
    store_bits(dst + i * out_size, out_size, encode(t, v, r, o));
  });
  return out;
}

std::vector<double> tensor::to_vector() const {
  const std::int64_t n = numel();
  std::vector<double> values(n);
  if (n == 0) return values;  // memcpy from or to no storage would be undefined, even of 0 bytes
  if (is_contiguous() && type_ == dtype::f64) {
    std::memcpy(values.data(), data(), n * sizeof(double));
  } else if (is_contiguous() && storage_type(type_) == dtype::f32) {
    const float* p = data_as<float>();
    for (std::int64_t i = 0; i < n; ++i) values[i] = p[i];
  } else {
    const std::size_t size = element_size();
    const auto* src = static_cast<const std::byte*>(data());
    for_each_element(shape_, strides_, strides_, [&](std::int64_t i, std::int64_t off, std::int64_t) {
      values[i] = decode(type_, load_bits(src + off * size, size));
    });
  }
  return values;
}

void tensor::assign(std::span<const double> values, rounding r, overflow o) {
  if (static_cast<std::int64_t>(values.size()) != numel())
    throw error("assigning " + std::to_string(values.size()) + " values to a tensor of shape " +
                to_string(shape_));
  if (values.empty()) return;  // an empty span's data() may be null: no memcpy of it
  if (is_contiguous() && type_ == dtype::f64) {
    std::memcpy(data(), values.data(), values.size() * sizeof(double));
    return;
  }
  const std::size_t size = element_size();
  auto* dst = static_cast<std::byte*>(data());
  for_each_element(shape_, strides_, strides_, [&](std::int64_t i, std::int64_t off, std::int64_t) {
    store_bits(dst + off * size, size, encode(type_, values[i], r, o));
  });
}

bool tensor::bitwise_equal(const tensor& other) const {
  if (type_ != other.type_ || shape_ != other.shape_) return false;
  if (empty() || other.empty()) return empty() && other.empty();
  const std::size_t size = element_size();
  const auto* a = static_cast<const std::byte*>(data());
  const auto* b = static_cast<const std::byte*>(other.data());
  if (is_contiguous() && other.is_contiguous()) return std::memcmp(a, b, numel() * size) == 0;
  bool equal = true;
  for_each_element(shape_, strides_, other.strides_, [&](std::int64_t, std::int64_t oa, std::int64_t ob) {
    equal = equal && std::memcmp(a + oa * size, b + ob * size, size) == 0;
  });
  return equal;
}

tensor make_f64(const dims& shape, std::span<const double> values) {
  tensor t(dtype::f64, shape);
  t.assign(values);
  return t;
}

}  // namespace opval
