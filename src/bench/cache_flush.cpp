#include "bench/cache_flush.hpp"

#include <algorithm>
#include <cstdint>

#include "bench/environment.hpp"

namespace opval {
namespace {

constexpr std::size_t line_bytes = 64;

}  // namespace

std::size_t last_level_cache_bytes() {
  std::uint64_t largest = 0;
  for (const cache_info& c : cpu0_caches()) largest = std::max(largest, c.bytes);
  return static_cast<std::size_t>(largest);
}

cache_flusher::cache_flusher(std::size_t bytes) {
  if (bytes == 0) {
    const std::size_t llc = last_level_cache_bytes();
    bytes = llc ? 2 * llc : std::size_t{64} << 20;
  }
  buffer_.assign(std::max(bytes, line_bytes), 0);
}

void cache_flusher::flush() {
  // A read-modify-write per line: the line comes in, dirty, and pushes older lines out.
  volatile unsigned char* p = buffer_.data();
  for (std::size_t i = 0; i < buffer_.size(); i += line_bytes) p[i] = static_cast<unsigned char>(p[i] + 1);
}

}  // namespace opval
