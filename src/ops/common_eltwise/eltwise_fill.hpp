#pragma once
// Fills shared by the elementwise ops: the generic kinds with ranges an op picks from its
// types (so fp16 products do not overflow and gelu/silu see their nonlinear region).
#include <cstdint>
#include <span>
#include <string_view>

#include "core/fill.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::eltwise {

/// Ranges of the generic fills for one input.
struct fill_ranges {
  double normal_scale = 3.0;  ///< sigma 3: most values in [-9, 9], the curved part of gelu/silu
  double uniform_lo = -8.0, uniform_hi = 8.0;
  double large_scale = 1000.0;  ///< `large`: uniform in [-large_scale, large_scale]
  int wide_exponents = 20;      ///< `wide`: binary exponents in [-10, 10]
};

/// The parameters of the fill `name` ("default" means normal) over `r`; throws opval::error
/// for a name that is not a generic fill.
fill_params eltwise_fill_params(std::string_view name, const fill_ranges& r);

/// What the fill `name` guarantees. `exact_on_integers`: the op computes small integers
/// exactly (relu, add, mul), so the `exact` fill gives exact results.
fill_traits eltwise_fill_traits(std::string_view name, bool exact_on_integers);

/// Fills input i from stream i with params[i].
void fill_inputs(std::span<tensor> in, std::span<const fill_params> params, std::uint64_t seed);

/// min(cap, fraction * the largest finite value of each type): a magnitude no type overflows at.
double safe_magnitude(double cap, double fraction, std::initializer_list<dtype> types);

}  // namespace opval::ops::eltwise
