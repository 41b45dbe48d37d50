// Allocator interposition for memory accounting (docs/SAFETY.md, "Memory accounting and
// leaks"). Defined in the executable, these functions take precedence over glibc's for every
// shared library of the process (plugins, oneDNN, OpenBLAS, the C++ runtime's operator new);
// each forwards to glibc's own implementation (__libc_*) and, only while accounting is on,
// counts the block at its usable size. Never allocates itself, so it is safe at any time,
// including before static initialisation and inside the dynamic loader's calls.
//
// Compiled to nothing under AddressSanitizer, ThreadSanitizer or MemorySanitizer, whose
// runtimes replace malloc themselves: the accounting then reports "not measured".
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define OPVAL_HEAP_HOOKS_DISABLED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OPVAL_HEAP_HOOKS_DISABLED 1
#endif

#ifndef OPVAL_HEAP_HOOKS_DISABLED
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <malloc.h>
#include <unistd.h>

#include "heap_hooks/heap_hooks.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void* __libc_valloc(std::size_t);
void* __libc_pvalloc(std::size_t);
}

namespace {

// Constant-initialised: valid before any constructor runs.
constinit opval::detail::heap_counters counters;

bool counting() { return counters.on.load(std::memory_order_relaxed); }

void count_allocation(void* p) {
  if (!p) return;
  const auto size = static_cast<std::int64_t>(malloc_usable_size(p));
  counters.allocated.fetch_add(size, std::memory_order_relaxed);
  counters.allocations.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t live = counters.live.fetch_add(size, std::memory_order_relaxed) + size;
  std::int64_t peak = counters.peak.load(std::memory_order_relaxed);
  while (live > peak && !counters.peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void count_release(void* p) {
  if (!p) return;
  counters.live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  counters.releases.fetch_add(1, std::memory_order_relaxed);
}

// The result of an allocation, counted when accounting is on.
void* counted(void* p) {
  if (counting()) count_allocation(p);
  return p;
}

bool valid_alignment(std::size_t alignment) {
  return alignment != 0 && (alignment & (alignment - 1)) == 0 && alignment % sizeof(void*) == 0;
}

}  // namespace

extern "C" {

opval::detail::heap_counters* opval_heap_hooks_counters() noexcept { return &counters; }

void* malloc(std::size_t size) { return counted(__libc_malloc(size)); }

void free(void* p) {
  if (counting()) count_release(p);
  __libc_free(p);
}

void* calloc(std::size_t n, std::size_t size) { return counted(__libc_calloc(n, size)); }

void* realloc(void* p, std::size_t size) {
  // Counted as a release of the old block and an allocation of the new one; the old size is
  // read first, since realloc may free it. A failed realloc leaves the old block in place.
  const bool on = counting();
  const std::size_t old_size = on && p ? malloc_usable_size(p) : 0;
  void* q = __libc_realloc(p, size);
  if (!on || (!q && size != 0)) return q;
  if (p) {
    counters.live.fetch_sub(static_cast<std::int64_t>(old_size), std::memory_order_relaxed);
    counters.releases.fetch_add(1, std::memory_order_relaxed);
  }
  count_allocation(q);
  return q;
}

void* reallocarray(void* p, std::size_t n, std::size_t size) {
  std::size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, bytes);
}

void* memalign(std::size_t alignment, std::size_t size) { return counted(__libc_memalign(alignment, size)); }

void* aligned_alloc(std::size_t alignment, std::size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return memalign(alignment, size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  if (!valid_alignment(alignment)) return EINVAL;
  void* p = memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(std::size_t size) { return counted(__libc_valloc(size)); }

void* pvalloc(std::size_t size) { return counted(__libc_pvalloc(size)); }

}  // extern "C"

#endif  // OPVAL_HEAP_HOOKS_DISABLED
