#pragma once
// Comparison of a kernel's output with the fp64 reference: every metric opval reports (the
// metrics types are in opval/verdict.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "opval/tensor.hpp"
#include "opval/verdict.hpp"

namespace opval {

/// Inputs of one comparison. `bound` and `compute_bound` are f64 tensors of the output's
/// shape or empty; `expected` is the f64 reference; `got` is the kernel's output in its type.
struct compare_input {
  const tensor* got = nullptr;
  const tensor* expected = nullptr;
  const tensor* bound = nullptr;          ///< total per-element bound, or null
  const tensor* compute_bound = nullptr;  ///< non-rounding part (for bias eligibility), or null
  dtype ulp_type = dtype::f32;            ///< ULPs are of this type (the contract's dst)
  int worst_k = 5;
  double bias_z = 6.0;                    ///< bias test threshold on |z|
  double bias_min_ulps = 0.1;             ///< and on |mean| in ULPs
  bool bias_test = true;                  ///< false: metrics only, never `biased`
  std::string bias_skip_reason;           ///< why, when bias_test is false
  /// Elements whose |expected| is below this are left out of the bias test: a kernel that
  /// flushes subnormal results (denorm=ftz) errs toward zero there by contract, not by bias.
  double bias_floor = 0;
  /// Where the contract's own roundings may turn a special value into another (it rounds or
  /// flushes its inputs, or rounds toward zero: contract_changes_specials, output_judging.hpp):
  /// the contract's emulation of the output (sim), else null. An element equal to it where it
  /// is NaN or an infinity, or where it is ulp_type's largest finite value of the sign of an
  /// exact value beyond it (rz saturates there), is an exact match.
  const tensor* contract_values = nullptr;
};

/// Computes all metrics in one multithreaded pass (plus a pass for the worst k).
metrics compare_outputs(const compare_input& in);

/// Where the errors lie (error_tiles, opval/verdict.hpp): a second pass, made only for a
/// failing output, so that the comparison of every passing one costs nothing more.
error_tiles tile_errors(const compare_input& in);

}  // namespace opval
