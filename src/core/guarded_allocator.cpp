#include "core/guarded_allocator.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "core/huge_pages.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

// The byte the slack around a buffer is filled with. Not 0 (the usual stray write) nor 0xff.
constexpr std::byte canary{0xcb};

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

// How far past the end (or before the start) of a buffer an access must still trap. One page
// is not enough: a kernel reading a row or a tile past the end (4 KiB is a common stride)
// jumps over a single guard page into whatever is mapped beyond it.
constexpr std::size_t guard_reach = std::size_t{64} << 10;

// The guard region: the reach in whole pages (16 of 4 KiB; one where pages are 64 KiB).
std::size_t guard_bytes() {
  static const std::size_t bytes = round_up(guard_reach, page_size());
  return bytes;
}

// One live guarded mapping. `state` guards the rest: the signal handler reads only slots
// that are `live`, and a writer moves a slot out of `live` while it changes it.
struct region {
  enum : std::uint32_t { free_slot = 0, busy = 1, live = 2 };
  std::atomic<std::uint32_t> state{free_slot};
  std::byte* map = nullptr;  ///< the whole mapping
  std::size_t map_bytes = 0;
  std::byte* guard = nullptr;  ///< the PROT_NONE guard region, guard_bytes() long
  std::size_t guard_size = 0;  ///< guard_bytes(), kept here for the signal handler
  std::byte* data = nullptr;   ///< the buffer handed out
  std::size_t data_bytes = 0;
  guard_side side = guard_side::after;
  char name[64] = {};
  char role[32] = {};
};

// Fixed capacity so the registry never allocates, and a signal handler can walk it.
constexpr std::size_t max_regions = 4096;
std::array<region, max_regions> registry;

// Slots at or above this index have never been used: scans stop there.
std::atomic<std::size_t> slots_used{0};

region* claim_slot() {
  for (std::size_t i = 0; i < max_regions; ++i) {
    region& r = registry[i];
    std::uint32_t expected = region::free_slot;
    if (r.state.compare_exchange_strong(expected, region::busy, std::memory_order_acquire)) {
      std::size_t used = slots_used.load(std::memory_order_relaxed);
      while (used < i + 1 && !slots_used.compare_exchange_weak(used, i + 1)) {}
      return &r;
    }
  }
  return nullptr;
}

bool contains(const region& r, const std::byte* a) {
  return a >= r.data && a < r.data + std::max<std::size_t>(r.data_bytes, 1);
}

// The live slot whose buffer contains addr, moved to `busy` (the caller sets it back). Waits
// out another thread's brief hold on that slot rather than missing it.
region* lock_slot_of(const void* addr) {
  auto* a = static_cast<const std::byte*>(addr);
  const std::size_t n = slots_used.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    region& r = registry[i];
    for (;;) {
      std::uint32_t s = r.state.load(std::memory_order_acquire);
      if (s == region::free_slot) break;
      if (s == region::live) {
        if (!contains(r, a)) break;
        if (r.state.compare_exchange_weak(s, region::busy, std::memory_order_acquire)) return &r;
      }
    }
  }
  return nullptr;
}

void unlock(region& r) { r.state.store(region::live, std::memory_order_release); }

void copy_text(char* dst, std::size_t cap, std::string_view src) noexcept {
  const std::size_t n = std::min(cap - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// The slack byte ranges of a region: [map, data) and [data+bytes, map end) minus the guard.
struct span_bytes {
  std::byte* begin;
  std::byte* end;
};
span_bytes head_slack(const region& r) {
  std::byte* start = r.side == guard_side::before ? r.guard + r.guard_size : r.map;
  return {start, r.data};
}
span_bytes tail_slack(const region& r) {
  std::byte* end = r.side == guard_side::after ? r.guard : r.map + r.map_bytes;
  return {r.data + r.data_bytes, end};
}

void fill_canary(span_bytes s) { std::fill(s.begin, s.end, canary); }

// First and last damaged byte offsets (relative to s.begin) and the count; count 0 = intact.
struct damage {
  std::size_t first = 0, last = 0, count = 0;
};
damage find_damage(span_bytes s) {
  damage d;
  for (std::byte* p = s.begin; p < s.end; ++p)
    if (*p != canary) {
      const auto off = static_cast<std::size_t>(p - s.begin);
      if (d.count++ == 0) d.first = off;
      d.last = off;
    }
  return d;
}

// --- async-signal-safe text building (no allocation, no stdio) ---
struct writer {
  char* buf;
  std::size_t cap;
  std::size_t len = 0;
  void put(const char* s) noexcept {
    for (; *s && len + 1 < cap; ++s) buf[len++] = *s;
    buf[len] = '\0';
  }
  void put(std::size_t v) noexcept {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10), v /= 10;
    while (v);
    char s[24];
    for (int i = 0; i < n; ++i) s[i] = digits[n - 1 - i];
    s[n] = '\0';
    put(static_cast<const char*>(s));
  }
};

void put_owner(writer& w, const region& r) {
  w.put(" (");
  w.put(r.role[0] ? r.role : "unlabelled");
  w.put(", ");
  w.put(r.data_bytes);
  w.put(" bytes)");
}

// The part of a mapping of map_bytes the buffer and its slack live in: all but the guard
// region (at the start for `before`, at the end for `after`).
std::byte* usable_part(std::byte* map, guard_side side) {
  return side == guard_side::after ? map : map + guard_bytes();
}

// A fresh mapping of map_bytes, reserved PROT_NONE and then opened for reading and writing
// but for its guard region: the guard is only address space, neither memory nor commit charge.
std::byte* new_mapping(std::size_t map_bytes, guard_side side) {
  void* m = mmap(nullptr, map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw error(fmt::format("guarded allocator: cannot map {} bytes", map_bytes));
  auto* map = static_cast<std::byte*>(m);
  if (mprotect(usable_part(map, side), map_bytes - guard_bytes(), PROT_READ | PROT_WRITE) != 0) {
    munmap(m, map_bytes);
    throw error(fmt::format("guarded allocator: cannot make {} bytes writable", map_bytes - guard_bytes()));
  }
  // A large tensor in 2 MiB pages where the kernel has them: its first touch (the fill, the
  // poison) takes one fault per 2 MiB instead of one per 4 KiB.
  advise_huge_pages(usable_part(map, side), map_bytes - guard_bytes());
  return map;
}

// The mappings of freed tensors, kept for the next allocation of the same size and side. A
// validation run allocates the same shapes again and again (the second poisoned pass, the
// perturbation re-run, the next case of a sweep), and a fresh mapping costs an mmap, an
// mprotect, a page fault per page on first touch and an munmap whose TLB shootdown
// interrupts every thread of the process. A reused mapping keeps its guard page; allocate
// refills the canaries and the tensor clears its buffer. While cached, the whole mapping is
// PROT_NONE, so a kernel writing through a pointer kept from an earlier call still traps as
// it did on the unmapped memory. Bounded in count and bytes, oldest unmapped first, so a run
// over many sizes does not hoard memory.
class mapping_cache {
 public:
  mapping_cache() { entries_.reserve(max_entries); }  // so that give never allocates

  /// A cached mapping of exactly map_bytes for `side`, or nullptr.
  std::byte* take(std::size_t map_bytes, guard_side side) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
      if (it->bytes == map_bytes && it->side == side) {
        std::byte* map = it->map;
        bytes_ -= it->bytes;
        entries_.erase(std::next(it).base());
        if (mprotect(usable_part(map, side), map_bytes - guard_bytes(), PROT_READ | PROT_WRITE) == 0) return map;
        munmap(map, map_bytes);
        return nullptr;
      }
    return nullptr;
  }

  /// Keeps a freed mapping, or unmaps it when it is larger than the whole budget.
  void give(std::byte* map, std::size_t map_bytes, guard_side side) noexcept {
    if (map_bytes > max_bytes || mprotect(map, map_bytes, PROT_NONE) != 0) {
      munmap(map, map_bytes);
      return;
    }
    std::lock_guard lock(mutex_);
    while (!entries_.empty() && (entries_.size() == max_entries || bytes_ + map_bytes > max_bytes)) {
      munmap(entries_.front().map, entries_.front().bytes);
      bytes_ -= entries_.front().bytes;
      entries_.erase(entries_.begin());
    }
    entries_.push_back({map, map_bytes, side});
    bytes_ += map_bytes;
  }

 private:
  struct entry {
    std::byte* map;
    std::size_t bytes;
    guard_side side;
  };
  static constexpr std::size_t max_entries = 64;
  static constexpr std::size_t max_bytes = std::size_t{256} << 20;
  std::mutex mutex_;
  std::vector<entry> entries_;  // oldest first
  std::size_t bytes_ = 0;
};

mapping_cache& freed_mappings() {
  static auto* cache = new mapping_cache;  // leaked on purpose, like the allocators
  return *cache;
}

}  // namespace

void* guarded_allocator::allocate(std::size_t bytes, std::size_t alignment) {
  const std::size_t page = page_size();
  const std::size_t guard_size = guard_bytes();
  alignment = std::max<std::size_t>(alignment, 1);
  // The data span is rounded to the alignment so that, guard after, the buffer ends less than
  // `alignment` bytes before the guard region; alignments above a page need extra room to align.
  const std::size_t span = round_up(std::max<std::size_t>(bytes, 1), alignment);
  const std::size_t data_pages = round_up(span + (alignment > page ? alignment : 0), page);
  const std::size_t map_bytes = data_pages + guard_size;
  std::byte* map = freed_mappings().take(map_bytes, side_);
  if (!map) map = new_mapping(map_bytes, side_);
  std::byte* guard = side_ == guard_side::after ? map + data_pages : map;
  std::byte* data = nullptr;
  if (side_ == guard_side::after) {
    auto end = reinterpret_cast<std::uintptr_t>(guard);
    data = reinterpret_cast<std::byte*>(tight_ ? end - bytes : (end - bytes) / alignment * alignment);
  } else {
    auto start = reinterpret_cast<std::uintptr_t>(guard + guard_size);
    data = reinterpret_cast<std::byte*>(round_up(start, alignment));
  }
  region* r = claim_slot();
  if (!r) {
    munmap(map, map_bytes);
    throw error(fmt::format("guarded allocator: more than {} live guarded tensors", max_regions));
  }
  r->map = map;
  r->map_bytes = map_bytes;
  r->guard = guard;
  r->guard_size = guard_size;
  r->data = data;
  r->data_bytes = bytes;
  r->side = side_;
  r->name[0] = r->role[0] = '\0';
  fill_canary(head_slack(*r));
  fill_canary(tail_slack(*r));
  unlock(*r);
  return data;
}

void guarded_allocator::deallocate(void* p, std::size_t, std::size_t) noexcept {
  region* r = lock_slot_of(p);
  if (!r) return;  // not ours: nothing sane to do in a noexcept path
  std::byte* map = r->map;
  const std::size_t map_bytes = r->map_bytes;
  const guard_side side = r->side;
  r->state.store(region::free_slot, std::memory_order_release);
  freed_mappings().give(map, map_bytes, side);
}

std::string guarded_allocator::name() const {
  return side_ == guard_side::after ? "guarded (guard page after)" : "guarded (guard page before)";
}

guarded_allocator& shared_guarded_allocator(guard_side side, bool tight) {
  // Leaked on purpose: tensors held in statics may be freed after any static destructor.
  static auto* after = new guarded_allocator(guard_side::after);
  static auto* after_tight = new guarded_allocator(guard_side::after, true);
  static auto* before = new guarded_allocator(guard_side::before);
  if (side == guard_side::before) return *before;
  return tight ? *after_tight : *after;
}

bool label_guarded_region(const void* addr, std::string_view tensor_name, std::string_view role) noexcept {
  region* r = lock_slot_of(addr);
  if (!r) return false;
  copy_text(r->name, sizeof r->name, tensor_name);
  copy_text(r->role, sizeof r->role, role);
  unlock(*r);
  return true;
}

std::optional<std::string> check_guard_canaries(const void* addr) {
  region* r = lock_slot_of(addr);
  if (!r) return std::nullopt;
  const damage before = find_damage(head_slack(*r));
  const damage after = find_damage(tail_slack(*r));
  const std::size_t head_bytes = static_cast<std::size_t>(r->data - head_slack(*r).begin);
  std::string text;
  auto describe = [&](const char* side, std::size_t first, std::size_t last, std::size_t count, const char* where) {
    if (!text.empty()) text += "; ";
    text += fmt::format("canary {} tensor '{}' overwritten at bytes {}..{} {} ({} damaged; {}, {} bytes)", side,
                        r->name, first, last, where, count, r->role[0] ? r->role : "unlabelled", r->data_bytes);
  };
  // Before the buffer, offsets count back from its first byte (1 = the byte just before).
  if (before.count) describe("before", head_bytes - before.last, head_bytes - before.first, before.count, "before its start");
  if (after.count) describe("after", after.first, after.last, after.count, "past its end");
  unlock(*r);
  if (text.empty()) return std::nullopt;
  return text;
}

bool describe_guard_fault(const void* addr, char* buf, std::size_t size) noexcept {
  if (!buf || size == 0) return false;
  auto* a = static_cast<const std::byte*>(addr);
  const std::size_t n = slots_used.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    const region& r = registry[i];
    // Read without claiming: a handler must not spin, and a slot being relabelled is skipped.
    if (r.state.load(std::memory_order_acquire) != region::live) continue;
    if (a < r.guard || a >= r.guard + r.guard_size) continue;
    writer w{buf, size};
    w.put(r.side == guard_side::after ? "guard page after tensor '" : "guard page before tensor '");
    w.put(r.name);
    w.put("' hit at byte ");
    if (r.side == guard_side::after) {
      w.put(static_cast<std::size_t>(a - (r.data + r.data_bytes)));
      w.put(" past its end");
    } else {
      w.put(static_cast<std::size_t>(r.data - a));
      w.put(" before its start");
    }
    put_owner(w, r);
    return true;
  }
  buf[0] = '\0';
  return false;
}

}  // namespace opval
