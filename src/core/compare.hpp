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
};

/// Computes all metrics in one multithreaded pass (plus a pass for the worst k).
metrics compare_outputs(const compare_input& in);

}  // namespace opval
