// The stratified output sample of GEMM-like ops (gemm_sample.hpp).
#include "ops/common_gemm/gemm_sample.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/rng.hpp"

namespace opval::ops::common_gemm {

std::vector<std::int64_t> sampled_indices(std::int64_t extent, std::int64_t tile, std::uint64_t seed,
                                          std::uint64_t stream) {
  std::vector<std::int64_t> kept;
  if (extent <= 4 * tile) {
    for (std::int64_t i = 0; i < extent; ++i) kept.push_back(i);
    return kept;
  }
  for (std::int64_t band = 0; band * tile < extent; ++band) {
    const std::int64_t width = std::min(tile, extent - band * tile);
    kept.push_back(band * tile + std::int64_t(random_uniform(seed, stream, std::uint64_t(band)) * double(width)));
  }
  kept.push_back(0);
  kept.push_back(extent - 1);
  for (const std::int64_t tiling : {8, 16, 32, 64, 128})
    if (extent % tiling != 0) kept.push_back(extent - extent % tiling);
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  return kept;
}

std::string sample_coverage(std::int64_t tile) {
  return fmt::format("one random row in every aligned band of {0} rows and one random column in every band of {0} "
                     "columns, every pair of them: one element in every aligned {0}x{0} tile (and in every aligned "
                     "tile of 32 to 128) of each output matrix; rows and columns 0, the last, and the first of the "
                     "last partial tile of each tiling 8 to 128",
                     tile);
}

tensor take(const tensor& t, int dim, std::span<const std::int64_t> index) {
  dims shape = t.shape();
  shape[std::size_t(dim)] = std::int64_t(index.size());
  tensor out(t.type(), shape);
  const std::int64_t n = out.numel();
  if (n == 0) return out;
  const std::size_t es = t.element_size();
  const auto* src = static_cast<const std::byte*>(t.data());
  auto* dst = static_cast<std::byte*>(out.data());
  const int last = t.rank() - 1;
  const std::int64_t inner = shape[std::size_t(last)], inner_stride = t.strides()[std::size_t(last)];
  dims pos(shape.size(), 0);  // the outer dimensions' position; pos[last] stays 0
  for (std::int64_t base = 0; base < n; base += inner) {
    std::int64_t off = 0;
    for (int d = 0; d < last; ++d) off += (d == dim ? index[std::size_t(pos[d])] : pos[d]) * t.strides()[std::size_t(d)];
    for (std::int64_t j = 0; j < inner; ++j) {
      const std::int64_t from = off + (dim == last ? index[std::size_t(j)] : j) * inner_stride;
      std::memcpy(dst + std::size_t(base + j) * es, src + from * std::int64_t(es), es);
    }
    for (int d = last - 1; d >= 0; --d) {
      if (++pos[std::size_t(d)] < shape[std::size_t(d)]) break;
      pos[std::size_t(d)] = 0;
    }
  }
  return out;
}

}  // namespace opval::ops::common_gemm
