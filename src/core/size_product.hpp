#pragma once
// Checked arithmetic for sizes and strides computed from user-given shapes.
#include <cstdint>
#include <string_view>
#include <vector>

namespace opval {

/// a * b of sizes or strides; throws opval::error saying that `what` (e.g. "shape 2x3") has
/// more than 2^63 elements when int64 overflows. element_count and the strides of
/// tensor.hpp use it too.
std::int64_t size_product(std::int64_t a, std::int64_t b, std::string_view what);

/// a * b while computing a size or stride of `shape`; the error names the shape. The name is
/// formatted only on overflow: element counts are taken per element access.
std::int64_t size_product(std::int64_t a, std::int64_t b, const std::vector<std::int64_t>& shape);

}  // namespace opval
