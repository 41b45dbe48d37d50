#pragma once
// Bit-level checks around a kernel run: poisoned outputs (never-written elements), bitwise
// repeat equality (determinism) and input hashes (immutability). See docs/SAFETY.md.
#include <cstdint>
#include <optional>
#include <string>

#include "opval/tensor.hpp"

namespace opval::detail {

/// Fills t's whole storage with the poison pattern of `pass` (0 or 1): a signalling NaN with
/// a payload no arithmetic produces for the float types, distinct byte patterns otherwise.
void poison(tensor& t, int pass);

/// Where two runs' outputs disagree: `count` elements, the first at `first` (row-major).
struct element_finding {
  std::int64_t count = 0;
  std::int64_t first = -1;  ///< logical row-major position
  std::uint64_t bits_a = 0, bits_b = 0;  ///< the first element's bits in each tensor
};

/// Elements still holding pass 0's poison in `pass0` and pass 1's in `pass1`: never written.
element_finding never_written(const tensor& pass0, const tensor& pass1);

/// Elements whose bits differ between a and b, ignoring those never written in both (when
/// a and b were poisoned with different passes; `a_pass`/`b_pass` say which, -1 = none).
element_finding bitwise_differences(const tensor& a, int a_pass, const tensor& b, int b_pass);

/// True when a and b (same type, shape and strides) hold the same storage bytes, padding
/// included: then neither never_written nor bitwise_differences can find anything, and one
/// memcmp spares their per-element walks in the common case of a correct kernel.
bool same_storage(const tensor& a, const tensor& b);

/// A hash of t's whole storage (padding included), for before/after comparison.
std::uint64_t storage_hash(const tensor& t);

/// Elements of `now` that differ bitwise from `original` (same type, shape and strides).
element_finding changed_elements(const tensor& now, const tensor& original);

/// "[i,j] (0x7fc00000 vs 0x3f800000)": the first finding's index and bits.
std::string describe_first(const tensor& t, const element_finding& f);

}  // namespace opval::detail
