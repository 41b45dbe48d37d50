#pragma once
// Guarded tensor storage: each allocation gets its own mapping with a PROT_NONE guard region
// of 64 KiB (whole pages) right after (or before) the buffer, and canary bytes in the slack the
// alignment leaves between the buffer and the page boundaries. An out-of-bounds access up to
// 64 KiB beyond the buffer and its slack traps on the guard region (see describe_guard_fault);
// a write into the slack damages a canary (see check_guard_canaries).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "opval/tensor.hpp"

namespace opval {


/// An allocator whose every allocation is a separate guarded mapping (see file comment).
/// Allocations are listed in a process-wide registry (fixed capacity, lock-free) that
/// describe_guard_fault can read from a signal handler. Costs a few system calls, a page of
/// memory and 64 KiB of address space beyond the buffer per allocation: meant for the tensors
/// handed to a kernel under test.
class guarded_allocator final : public allocator {
 public:
  /// `tight` (guard after only): the buffer ends exactly at its guard, whatever the alignment
  /// asked, so that a read 1 byte past its end traps at every size; the buffer then has only
  /// its elements' alignment.
  explicit guarded_allocator(guard_side side = guard_side::after, bool tight = false) : side_(side), tight_(tight) {}
  /// Throws opval::error when the mapping fails or the registry is full.
  void* allocate(std::size_t bytes, std::size_t alignment) override;
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
  std::string name() const override;
  guard_side side() const { return side_; }

 private:
  guard_side side_;
  bool tight_;
};

/// A process-wide guarded allocator for `side` (never destroyed, so tensors may outlive
/// any caller's scope).
guarded_allocator& shared_guarded_allocator(guard_side side, bool tight = false);

/// Names the guarded region whose buffer contains `addr`: the tensor's name and its role
/// ("input 0", "output 1"), used by the fault and canary descriptions. Returns false when
/// `addr` is in no guarded buffer. Names longer than the registry's slots are truncated.
bool label_guarded_region(const void* addr, std::string_view tensor_name, std::string_view role) noexcept;

/// Checks the canary bytes around the guarded buffer containing `addr`. Returns nullopt when
/// they are intact (or `addr` is not guarded), else a one-line description naming the tensor,
/// the side and the damaged byte offsets ("canary after tensor 'dst' overwritten at bytes
/// 0..3 past its end (output 0, 80 bytes)").
std::optional<std::string> check_guard_canaries(const void* addr);

/// Async-signal-safe: writes into buf (NUL-terminated, at most size bytes) a one-line
/// description of the guarded tensor whose guard region contains addr, with the distance from
/// the buffer ("guard page after tensor 'dst' hit at byte 4096 past its end (output 0, 64
/// bytes)"), and returns true; false when addr is in no guard region.
bool describe_guard_fault(const void* addr, char* buf, std::size_t size) noexcept;

}  // namespace opval
