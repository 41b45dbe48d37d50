// add: the operation in double; binary_spec applies it to the exact inputs (the reference)
// and to the inputs as the kernel holds them in acc, rounded once (the emulation).
#include "ops/add/add.hpp"

namespace opval::ops::add {

double add_spec::apply(double a, double b) const { return a + b; }

// In unsigned arithmetic, which wraps modulo 2^64 (signed overflow would be undefined).
std::int64_t add_spec::apply_wrapped(std::int64_t a, std::int64_t b) const {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

}  // namespace opval::ops::add
