#pragma once
// Comparison of a kernel's output with the fp64 reference: every metric opval reports.
#include <cstdint>
#include <string>
#include <vector>

#include "opval/tensor.hpp"

namespace opval {

/// One of the worst elements: where, what was expected, what came, and the bound there.
struct worst_element {
  dims index;
  double expected = 0;  ///< fp64 reference
  double got = 0;
  double bound = 0;     ///< the element's total bound (0 when the policy has none)
  double abs_error = 0;
  double ulps = 0;      ///< in ULPs of the output type at the expected value
};

/// The statistical rounding-bias test over elements whose error is dominated by the final
/// rounding (see docs/NUMERICS.md).
struct bias_result {
  bool has_power = false;  ///< enough eligible elements for the test to detect 0.1 ULP
  std::int64_t eligible = 0;
  double distinct = 0;            ///< estimated distinct reference values among the eligible
  double sign_relative_mean = 0;  ///< mean((got-ref)*sign(ref)/ulp): about -0.5 for truncation
  double sign_relative_z = 0;
  double plain_mean = 0;          ///< mean((got-ref)/ulp): about +-0.5 for directed rounding
  double plain_z = 0;
  bool biased = false;
  std::string note;
};

/// Upper edges (in ULPs) of the ULP-error histogram bins; the last bin is open.
inline constexpr double ulp_bin_edges[] = {0, 0.5, 1, 2, 4, 16, 256, 65536};
inline constexpr int ulp_bins = 9;

/// Every metric of one output.
struct metrics {
  std::int64_t count = 0;
  double max_abs_error = 0, mean_abs_error = 0;
  double max_rel_error = 0, mean_rel_error = 0;
  double max_ulps = 0, p50_ulps = 0, p99_ulps = 0;
  std::vector<std::int64_t> ulp_histogram;  ///< ulp_bins counts
  std::int64_t beyond_bound = 0;
  double max_error_over_bound = 0;    ///< tightness: max of |err| / bound
  double median_error_over_bound = 0;
  std::int64_t nan_mismatch = 0;      ///< NaN in one of got/expected only
  std::int64_t inf_mismatch = 0;      ///< +-Inf disagreement
  std::int64_t neg_zero_mismatch = 0; ///< -0 vs +0 (reported, never failing by itself)
  double mean_signed_error = 0;
  double cosine_similarity = 1;
  bool got_all_zero = false;
  bool got_constant = false;
  bool ref_constant = false;          ///< every reference value within the bounds of the first
  std::int64_t ref_significant = 0;   ///< reference elements whose |value| exceeds their bound
  bias_result bias;
  std::vector<worst_element> worst;
};

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
};

/// Computes all metrics in one multithreaded pass (plus a pass for the worst k).
metrics compare_outputs(const compare_input& in);

}  // namespace opval
