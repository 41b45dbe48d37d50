#include "core/heap_stats.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/valgrind_client.hpp"
#include "heap_hooks/heap_hooks.hpp"

// Weak: null in a program without the hooks.
extern "C" opval::detail::heap_counters* opval_heap_hooks_counters() noexcept __attribute__((weak));

namespace opval {
namespace {

detail::heap_counters* hooks() { return opval_heap_hooks_counters ? opval_heap_hooks_counters() : nullptr; }

// A malloc the compiler cannot see through (and so cannot elide with its free).
void* (*volatile opaque_malloc)(std::size_t) = std::malloc;
void (*volatile opaque_free)(void*) = std::free;

// The hooks can be linked and still bypassed: valgrind, for one, replaces the executable's
// malloc with its own. One counted allocation tells.
std::string probe_hooks() {
  detail::heap_counters* c = hooks();
  if (!c) return "no allocator hooks in this program (libopval used as a library, or a sanitizer build)";
  // valgrind's preloaded allocator serves operator new and bypasses the hooks for part of
  // the heap: measuring would mislead.
  if (detail::under_valgrind()) return "the program runs under valgrind, whose allocator replaces the hooks";
  const std::int64_t before = c->allocations.load();
  c->on.store(true);
  opaque_free(opaque_malloc(24));
  c->on.store(false);
  if (c->allocations.load() == before)
    return "the allocator hooks are bypassed (another malloc replaces them, e.g. valgrind's)";
  return {};
}

}  // namespace

const std::string& heap_hooks_unavailable_reason() {
  static const std::string reason = probe_hooks();
  return reason;
}

heap_section::heap_section() {
  if (!heap_hooks_unavailable_reason().empty()) return;
  detail::heap_counters* c = hooks();
  live0_ = c->live.load();
  allocated0_ = c->allocated.load();
  allocations0_ = c->allocations.load();
  releases0_ = c->releases.load();
  c->peak.store(live0_);
  active_ = true;
  c->on.store(true);
}

heap_section::~heap_section() { finish(); }

heap_stats heap_section::finish() {
  if (!active_) return result_;
  detail::heap_counters* c = hooks();
  c->on.store(false);
  active_ = false;
  result_.measured = true;
  const std::int64_t live = c->live.load();
  result_.net_bytes = live - live0_;
  result_.peak_bytes = std::max<std::int64_t>(0, c->peak.load() - live0_);
  result_.total_bytes = c->allocated.load() - allocated0_;
  result_.allocations = c->allocations.load() - allocations0_;
  result_.releases = c->releases.load() - releases0_;
  return result_;
}

std::optional<std::int64_t> resident_bytes() {
  // read(2) into a stack buffer: no allocation, so it can sit next to a measured section.
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoll(buf, &end, 10);  // total program size; the resident size follows
  const long long pages = std::strtoll(end, &end, 10);
  return static_cast<std::int64_t>(pages) * ::sysconf(_SC_PAGESIZE);
}

leak_check judge_leaks(const std::vector<heap_stats>& runs) {
  leak_check l;
  l.runs = static_cast<int>(runs.size());
  for (const heap_stats& h : runs) {
    l.growth.push_back(h.net_bytes);
    l.growth_blocks.push_back(h.net_blocks());
  }
  l.leaks = !runs.empty() &&
            std::all_of(runs.begin(), runs.end(), [](const heap_stats& h) { return h.net_bytes > 0 && h.net_blocks() > 0; });
  if (!l.leaks) return l;
  l.bytes_per_call = *std::min_element(l.growth.begin(), l.growth.end());
  const std::int64_t most = *std::max_element(l.growth.begin(), l.growth.end());
  const std::int64_t blocks = *std::min_element(l.growth_blocks.begin(), l.growth_blocks.end());
  const std::int64_t total = std::accumulate(l.growth.begin(), l.growth.end(), std::int64_t{0});
  l.finding = fmt::format("leaks {} bytes{} in {} block{} per call: the live heap grew by {} bytes ({}) over {} more "
                          "run{} of the kernel, every run leaving more than the one before",
                          l.bytes_per_call, most == l.bytes_per_call ? "" : fmt::format(" (up to {})", most), blocks,
                          blocks == 1 ? "" : "s", total, format_bytes(total), l.runs, l.runs == 1 ? "" : "s");
  return l;
}

std::string format_bytes(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  const double a = std::abs(b);
  if (a < 1024) return fmt::format("{} B", bytes);
  if (a < 1024.0 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  if (a < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
}

}  // namespace opval
