#pragma once
// Cold-cache timing: a buffer at least twice the last-level cache, read and written line by
// line between samples, evicts whatever the kernel left in the caches (docs/BENCHMARKING.md).
#include <cstddef>
#include <vector>

namespace opval {

/// The largest cache of CPU 0 as sysfs describes it (/sys/devices/system/cpu/cpu0/cache), in
/// bytes; 0 when it cannot be read.
std::size_t last_level_cache_bytes();

class cache_flusher {
 public:
  /// A buffer of `bytes` (0: twice the last-level cache, or 64 MiB when it is unknown).
  explicit cache_flusher(std::size_t bytes = 0);
  /// Touches every cache line of the buffer (a read and a write), evicting the caches' content.
  void flush();
  std::size_t bytes() const { return buffer_.size(); }

 private:
  std::vector<unsigned char> buffer_;
};

}  // namespace opval
