// Transparent huge pages for large host buffers.
#pragma once

#include <cstddef>

namespace opval {

/// The size from which a buffer asks for 2 MiB pages. A validation case first-touches its
/// large buffers (inputs, poisoned outputs, the fp64 reference and bounds) once each: in 4 KiB
/// pages that is one fault per page, 25 ms per 64 MiB on the development VM, 4 ms in 2 MiB pages.
inline constexpr std::size_t huge_page_threshold = std::size_t{4} << 20;
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Asks for transparent huge pages over the whole 2 MiB pages inside [p, p + bytes) when the
/// buffer is at least huge_page_threshold. Advice only: without transparent huge pages (or
/// where the kernel has none free) nothing changes. The cost, on a kernel that must first
/// compact memory to find free huge pages, is an occasional one-time stall of one fault.
void advise_huge_pages(void* p, std::size_t bytes);

}  // namespace opval
