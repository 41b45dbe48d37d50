#include "core/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace opval {

void advise_huge_pages(void* p, std::size_t bytes) {
  if (bytes < huge_page_threshold) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
  const std::uintptr_t last = (begin + bytes) / huge_page_bytes * huge_page_bytes;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

}  // namespace opval
