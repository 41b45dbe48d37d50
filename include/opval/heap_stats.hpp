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

namespace opval {

/// Heap use of one measured section. Bytes are usable sizes (malloc_usable_size), so a block
/// counts a little more than was asked for (64 KiB asked = 65544 bytes with glibc).
struct heap_stats {
  bool measured = false;          ///< false: no allocator hooks in this process, all zero
  std::int64_t peak_bytes = 0;    ///< highest live heap above the section's start
  std::int64_t total_bytes = 0;   ///< bytes of all allocations in the section
  std::int64_t allocations = 0;   ///< number of allocations (a realloc counts as one)
  std::int64_t releases = 0;      ///< number of blocks released (any age)
  std::int64_t net_bytes = 0;     ///< live heap at the end minus at the start (< 0: freed older blocks)
  /// Live blocks at the end minus at the start.
  std::int64_t net_blocks() const { return allocations - releases; }
};

/// Memory use of a backend run: the set-up (prepare) and the kernel (execute + synchronize)
/// apart, since the set-up's allocations (primitives, plans, device buffers) are the
/// backend's, not the kernel's.
struct run_memory {
  heap_stats prepare;
  heap_stats kernel;
  std::optional<std::int64_t> kernel_rss_delta;  ///< resident set change across the kernel, bytes
};

/// The outcome of running a kernel N more times to look for leaks (see check_leaks).
struct leak_check {
  int runs = 0;                             ///< 0 = not checked
  std::vector<std::int64_t> growth;         ///< live heap growth of each run, bytes
  std::vector<std::int64_t> growth_blocks;  ///< live block count growth of each run
  bool leaks = false;                       ///< every run left more live blocks and bytes
  std::int64_t bytes_per_call = 0;          ///< the smallest growth, when leaking
  std::string finding;                      ///< the verdict's reason when leaking, else why not checked
};

/// Everything measured about a case's memory.
struct case_memory {
  run_memory run;   ///< the case's main run
  leak_check leak;
};

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
