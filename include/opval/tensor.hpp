#pragma once
// A typed, strided view of storage obtained from an allocator.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "opval/dtype.hpp"

namespace opval {

using dims = std::vector<std::int64_t>;

/// Which side of a guarded tensor the guard page sits on (src/core/guarded_allocator.hpp):
/// `after` catches writes past the end (the common bug); `before` catches writes before the
/// start (negative offsets, underflow).
enum class guard_side { after, before };

/// Where tensor storage comes from. A guarded allocator (memory checks) plugs in here.
class allocator {
 public:
  virtual ~allocator() = default;
  /// Returns at least `bytes` bytes aligned to `alignment`; throws on failure.
  virtual void* allocate(std::size_t bytes, std::size_t alignment) = 0;
  virtual void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept = 0;
  virtual std::string name() const = 0;
};

/// The process-wide host allocator (aligned operator new).
allocator& host_allocator();

/// How a tensor's elements are placed: strides in elements (empty = row-major contiguous),
/// an offset in elements from the start of the allocation, and the allocation's alignment.
struct layout {
  dims strides;
  std::int64_t offset = 0;
  std::size_t alignment = 64;
};

/// Row-major strides of `shape`.
dims row_major_strides(const dims& shape);
/// Row-major strides whose innermost-but-one stride is `ld` >= shape.back() (a padded
/// leading dimension, as BLAS's lda).
dims padded_strides(const dims& shape, std::int64_t ld);
/// Strides of a logical N x C x spatial... shape (NCHW, OIHW, any number of spatial dims) stored
/// channels-last (NHWC, OHWI: PyTorch's channels_last): C innermost, then the spatial dims in
/// order, N outermost. Rank < 3: row-major.
dims channels_last_strides(const dims& shape);
/// Product of the extents.
std::int64_t element_count(const dims& shape);
/// "2x3x4" (or "scalar" for rank 0).
std::string to_string(const dims& shape);

/// dtype + shape + strides over shared storage. Copies are shallow (views share storage).
class tensor {
 public:
  tensor() = default;
  /// Allocates zero-filled storage large enough for `lay`'s strides and offset.
  tensor(dtype t, dims shape, const layout& lay = {}, allocator& alloc = host_allocator());

  dtype type() const { return type_; }
  const dims& shape() const { return shape_; }
  const dims& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t numel() const { return element_count(shape_); }
  bool empty() const { return !storage_; }
  bool is_contiguous() const;
  std::size_t element_size() const;
  /// Bytes from element 0 through the last element, gaps of the strides included (0 when the
  /// tensor has no element): what a kernel may touch.
  std::size_t span_bytes() const;

  /// Address of the element at index (0, ..., 0).
  void* data();
  const void* data() const;
  /// Typed address of element 0; T must match the storage type's size.
  template <class T>
  T* data_as() { return static_cast<T*>(data()); }
  template <class T>
  const T* data_as() const { return static_cast<const T*>(data()); }

  /// Element at a multi-index, decoded exactly to double.
  double get(std::span<const std::int64_t> index) const;
  /// Stores v at a multi-index, rounded to the element type.
  void set(std::span<const std::int64_t> index, double v, rounding r = rounding::rne,
           overflow o = overflow::ieee);
  /// Element at a logical row-major position (0 .. numel-1), whatever the strides.
  double at(std::int64_t linear) const;
  void set_at(std::int64_t linear, double v, rounding r = rounding::rne,
              overflow o = overflow::ieee);
  /// The multi-index of a logical row-major position.
  dims unravel(std::int64_t linear) const;

  /// Views (share storage).
  tensor permute(std::span<const int> order) const;
  tensor transpose(int a, int b) const;
  tensor slice(int dim, std::int64_t begin, std::int64_t end, std::int64_t step = 1) const;
  tensor reshape(const dims& shape) const;  ///< requires a contiguous tensor

  /// A contiguous copy with the same type.
  tensor contiguous() const;
  /// A contiguous copy converted to `t` (values rounded as round_to does).
  tensor to(dtype t, rounding r = rounding::rne, overflow o = overflow::ieee) const;
  /// All elements in logical row-major order, exactly.
  std::vector<double> to_vector() const;
  /// Stores values (row-major order, numel of them), rounded to the element type.
  void assign(std::span<const double> values, rounding r = rounding::rne,
              overflow o = overflow::ieee);
  /// Bitwise equality of the logical elements (same type and shape required).
  bool bitwise_equal(const tensor& other) const;

 private:
  std::int64_t byte_offset_of(std::span<const std::int64_t> index) const;
  std::int64_t byte_offset_of_linear(std::int64_t linear) const;

  dtype type_ = dtype::f32;
  dims shape_;
  dims strides_;
  std::int64_t offset_ = 0;
  std::shared_ptr<std::byte> storage_;
  std::size_t storage_bytes_ = 0;
};

/// A contiguous f64 tensor holding `values` (row-major).
tensor make_f64(const dims& shape, std::span<const double> values);

}  // namespace opval
