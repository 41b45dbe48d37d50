#pragma once
// What the normalization ops' tests share: the family's kernel with other algorithm choices
// (Welford, other summation orders, a wrong eps) and a case run on it.
#include <cstdint>
#include <span>
#include <string>

#include "ops/common_norm/norm_common.hpp"
#include "ops/op_testing.hpp"

namespace opval::testing {

/// The sim kernel of any norm op with the algorithm choices of `v`.
inline kernel_fn norm_variant_kernel(ops::norm::kernel_variant v) {
  return [v](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    ops::norm::norm_of(p).simulate_with(p, in, out, v);
  };
}

/// Fills, runs the kernel variant (sim by default), the reference and the bounds.
inline direct_case norm_case(const std::string& line, std::uint64_t seed = 1, const ops::norm::kernel_variant& v = {}) {
  return run_direct(parse_problem(line), seed, {}, norm_variant_kernel(v));
}

}  // namespace opval::testing
