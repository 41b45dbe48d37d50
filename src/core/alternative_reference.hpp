#pragma once
// An alternative reference: another implementation that cases are judged against instead of
// the op's own fp64 reference (docs/REFERENCES.md, "Alternative references"). Either a
// framework computing in float64 (the Python adapters: torch, onnxruntime, jax), as precise as
// the op's own reference, or any backend running the problem at its own contract, whose
// rounding error then widens the tolerance: |kernel - alt| <= |kernel - exact| + |alt - exact|,
// so the kernel is judged with twice the bound.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/runner.hpp"
#include "core/compare.hpp"

namespace opval {

// The alternative_reference itself (what run_options names) is in opval/runner.hpp.

/// Whether the reference can compute p; when it cannot, the case's verdict: SKIPPED (or
/// UNIMPLEMENTED), with a reason naming the reference.
support reference_support(const alternative_reference& r, const problem& p);

/// The reference's results for p on inputs `in`: contiguous f64 tensors of p's output shapes,
/// and whether they carry the contract's rounding (at the contract, or a float64 reference
/// that said it rounded to the output types).
struct reference_values {
  std::vector<tensor> outputs;
  bool rounded = false;
  /// The factor on the bound a kernel is judged with against them: 2 when rounded, else 1.
  double bound_factor() const { return rounded ? 2.0 : 1.0; }
};
reference_values reference_outputs(const alternative_reference& r, const problem& p, std::span<const tensor> in);

/// How far the alternative's result `alt` for output `output` lies from the op's own fp64
/// reference `own`, measured against the per-element bound `bound` (null: none).
struct reference_agreement {
  metrics m;
  bool agrees = true;  ///< no NaN or Inf mismatch, and within the bound where there is one
  std::string text;    ///< "output 'y': max |diff| 2.2e-16 (1e-9 of the bound)" and mismatches
};
reference_agreement compare_references(const std::string& output, const tensor& alt, const tensor& own,
                                       const tensor* bound, dtype ulp_type);

}  // namespace opval
