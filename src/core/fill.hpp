#pragma once
// Input generation: named fill kinds, quantized to the tensor's type, deterministic per
// (seed, stream, element).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opval/tensor.hpp"

namespace opval {

/// The fill kinds every op understands (ops may add their own, e.g. zero-variance rows).
enum class fill_kind : std::uint8_t {
  uniform,     ///< uniform in [lo, hi]
  normal,      ///< N(0, scale^2)
  positive,    ///< uniform in [scale/16, scale]: same sign everywhere (sums stagnate)
  exact,       ///< small integers in [-range, range] with a given density of nonzeros
  wide,        ///< random sign and a binary exponent in [-n/2, n/2), clipped to the type's range
  cancel,      ///< values in +/- pairs with tiny residues: heavy cancellation in sums
  large,       ///< uniform in [-scale, scale]; ops pick a large scale (softmax: exp overflow)
  special,     ///< normal values sprinkled with NaN, +/-Inf, -0, tiny subnormals and subnormals near min_normal, each in every tensor
};

/// Parameters of a fill. Fields unused by a kind are ignored.
struct fill_params {
  fill_kind kind = fill_kind::normal;
  double lo = -1.0, hi = 1.0;    ///< uniform range
  double scale = 1.0;            ///< normal sigma; positive/large magnitude
  int exact_range = 4;           ///< exact: integers in [-exact_range, exact_range]
  double density = 1.0;          ///< exact: probability of a nonzero
  int wide_exponents = 20;       ///< wide: exponents in [-n/2, n/2]
  double special_rate = 0.01;    ///< special: fraction of special values
};

/// Fills every element of t (any layout) from (seed, stream, row-major index), rounding
/// each value to t's type (saturating, so fills never produce an unintended infinity).
void fill_tensor(tensor& t, const fill_params& params, std::uint64_t seed, std::uint64_t stream);

/// Whether the fill draws each value's sign as a fair coin independent of its magnitude and of
/// every other value (normal, wide, large, and uniform over a range symmetric about 0); the
/// rounding to the tensor's type keeps that (fill_traits::random_signs).
bool symmetric_signs(const fill_params& p);

/// Parses a fill name ("normal", "uniform", ...); throws opval::error.
fill_kind parse_fill_kind(std::string_view name);
std::string_view to_string(fill_kind k);
/// All generic fill names.
std::vector<std::string> generic_fill_names();

}  // namespace opval
