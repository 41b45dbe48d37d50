#pragma once
// The outcome of one case: a state, the reason, and the metrics and bound that decided it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

/// Where in an output its errors lie: the output viewed as rows x its last dimension (leading
/// dimensions folded into rows), cut into at most max_tiles x max_tiles tiles, each holding the
/// largest |error| / bound of its elements (infinite for a NaN or Inf mismatch). A failing
/// output's heatmap; empty for the others, whose records stay as they were.
struct error_tiles {
  static constexpr std::int64_t max_tiles = 32;  ///< per side
  std::int64_t rows = 0, cols = 0;               ///< the output as a matrix
  std::int64_t tile_rows = 0, tile_cols = 0;     ///< elements per tile (the last ones may hold fewer)
  std::vector<std::vector<double>> max_error_over_bound;  ///< [tile row][tile column]
  bool empty() const { return max_error_over_bound.empty(); }
};

/// Every metric of one output.
struct metrics {
  std::int64_t count = 0;
  double max_abs_error = 0, mean_abs_error = 0;
  double max_rel_error = 0, mean_rel_error = 0;
  double max_ulps = 0, p50_ulps = 0, p99_ulps = 0;
  /// The largest |error| in ULPs of the output's scale (of its largest |expected| value): what
  /// an error amounts to at the size of the results. Per-element ULPs (max_ulps) of results near
  /// zero (a sum that cancels, a normalization's centred values) run to millions for a correct
  /// kernel, as large as a planted bug's; at the output's scale they do not. Infinite for a NaN
  /// or Inf mismatch.
  double max_scaled_ulps = 0;
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
  error_tiles tiles;  ///< only for an output whose element-wise test failed
};


/// crash: the worker process running the case died (signal, or exit during the case);
/// timeout: the case ran past its time limit and its worker was killed. Both only with
/// process isolation (core/isolation.hpp).
enum class state : std::uint8_t { passed, failed, mistrusted, skipped, unimplemented, crash, timeout };

/// PASSED, FAILED, MISTRUSTED, SKIPPED, UNIMPLEMENTED, CRASH, TIMEOUT.
std::string_view to_string(state s);
/// The state named by to_string's text; nullopt for any other text.
std::optional<state> parse_state(std::string_view text);

/// The result of one of an output's posterior tests (op_spec::posterior): a comparison of the
/// output transformed (softmax: each row divided by its own sum) with its own bound.
struct output_check {
  std::string name;
  state st = state::passed;  ///< passed or failed
  std::string reason;
  std::string bound;
  metrics m;
};

/// The judgement of one output.
struct output_verdict {
  std::string name;
  state st = state::passed;  ///< the worst of the element-wise test's and the checks' states
  std::string reason;   ///< which element, which bound (empty when passed cleanly)
  std::string bound;    ///< the formula or tolerance that applied
  metrics m;            ///< the element-wise comparison
  std::vector<output_check> checks;  ///< the posterior tests, where the op has any
};

/// The judgement of a case: the worst of its outputs' states, with every reason.
struct verdict {
  state st = state::passed;
  std::string reason;   ///< one line: the first failing output's reason, or the skip reason
  std::string policy;       ///< the policy as given (its text: a name and parameters)
  std::string policy_note;  ///< where it could not apply as given, what was used instead
  std::vector<output_verdict> outputs;
};

/// True for the states that make `opval run` exit non-zero.
bool is_failure(state s);

/// The state and reason of one output from its metrics and bound (`ov.m`, `ov.bound`):
/// MISTRUSTED when it is all zero or constant where the reference is not, FAILED beyond the
/// bound (NaN and Inf mismatches included) or for a systematic rounding bias, else PASSED.
void decide(output_verdict& ov);

}  // namespace opval
