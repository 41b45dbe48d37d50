#pragma once
// Suite construction shared by the elementwise ops: every value of every axis (shapes,
// layouts, fills, contract options, op attributes) appears at least once per contract,
// without the cartesian product's cost.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"

namespace opval::ops::eltwise {

/// One suite axis: descriptor fragments such as "shape=7x13 stride_pad=3"; the first is the
/// base value ("" = the defaults).
using suite_axis = std::vector<std::string>;

/// For each contract: the line with every axis at its base, then one line per non-base value
/// of each axis with the other axes at their base.
std::vector<std::string> covering_lines(std::string_view op, std::span<const suite_axis> axes,
                                        std::span<const std::string> contracts);

/// Shapes and layouts for unary ops: size 1, rank 0, primes, sizes that are not multiples of
/// 8/16/32/64, 2-D to 4-D, padded rows and stepped (sliced) innermost dimensions.
suite_axis unary_shapes(bool smoke);
/// The generic fills (smoke: default and special only); `exact` only for ops that compute
/// small integers exactly.
suite_axis generic_fills(bool smoke, bool exact_on_integers);
/// Non-default contract options: directed rounding of acc, flush-to-zero; those `op` reads.
suite_axis contract_option_values(bool smoke, const op_spec& op);

/// A named suite axis, for a feature table.
struct named_axis {
  std::string name;
  suite_axis values;
};

/// The feature table of named axes: the base is every axis's first value, each axis a feature
/// of its other values.
feature_table axes_table(std::span<const named_axis> axes, std::vector<std::string> contracts);

/// Appends b to a.
void append(std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace opval::ops::eltwise
