#pragma once
// Memory accounting: the heap use of a kernel (allocations through malloc, operator new and
// their relatives, by every thread of the process) and the change of the process's resident
// set, measured around a section of code; and leak detection over repeated runs. The heap is
// measured through allocator hooks linked into the `opval` executable (src/heap_hooks); in a
// program without them (libopval as a library, sanitizer builds) the stats say "not measured".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opval/runner.hpp"

namespace opval {

// The types of the measurements (heap_stats, run_memory, leak_check, case_memory) are in
// opval/runner.hpp, with the case result that records them.


/// "" when the allocator hooks are linked and see allocations, else why the heap is not
/// measured ("no allocator hooks in this program", "... bypassed (valgrind?)").
const std::string& heap_hooks_unavailable_reason();

/// Measures the heap from construction to finish(); one section at a time per process
/// (sections do not nest), counting every thread's allocations meanwhile.
class heap_section {
 public:
  heap_section();
  ~heap_section();
  heap_section(const heap_section&) = delete;
  heap_section& operator=(const heap_section&) = delete;
  /// Stops counting and returns the section's stats (the same on later calls).
  heap_stats finish();

 private:
  bool active_ = false;
  heap_stats result_;
  std::int64_t live0_ = 0, allocated0_ = 0, allocations0_ = 0, releases0_ = 0;
};

/// The process's resident set size in bytes (from /proc/self/statm), if readable.
std::optional<std::int64_t> resident_bytes();

/// Judges the heap stats of N repeated runs: leaking when every run left both more live
/// blocks and more live bytes than it found. A cache filled on the first call does not grow
/// on later ones; blocks are counted because usable sizes jitter by a few bytes with the
/// heap's layout (glibc hands out whole chunks when the rest would be too small to keep),
/// so a block freed and re-allocated on each run can look like a few bytes of growth.
leak_check judge_leaks(const std::vector<heap_stats>& runs);

/// "12.5 KiB" style text for a byte count.
std::string format_bytes(std::int64_t bytes);

}  // namespace opval
