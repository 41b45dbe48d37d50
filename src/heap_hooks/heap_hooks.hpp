#pragma once
// The interface between the allocator hooks (heap_hooks.cpp, linked into executables only)
// and libopval's memory accounting (src/core/heap_stats.cpp). libopval refers to
// opval_heap_hooks_counters weakly: in a program without the hooks (libopval used as a
// library, the Python module, sanitizer builds) the reference is null and nothing is measured.
#include <atomic>
#include <cstdint>

namespace opval::detail {

/// Process-wide heap counters, updated by every allocation and release while `on` is set.
/// Sizes are malloc_usable_size's, so a release subtracts exactly what its allocation added.
struct heap_counters {
  std::atomic<bool> on{false};
  std::atomic<std::int64_t> live{0};         ///< bytes allocated minus bytes released
  std::atomic<std::int64_t> peak{0};         ///< highest `live` since it was last reset
  std::atomic<std::int64_t> allocated{0};    ///< bytes of every allocation
  std::atomic<std::int64_t> allocations{0};  ///< number of allocations
  std::atomic<std::int64_t> releases{0};     ///< number of releases
};

}  // namespace opval::detail

/// The hooks' counters; defined only where the hooks are linked (libopval declares it weak).
extern "C" opval::detail::heap_counters* opval_heap_hooks_counters() noexcept;
