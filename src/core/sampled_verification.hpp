#pragma once
// Sampled verification (run_options::verify, docs/NUMERICS.md "Sampled verification"): a
// stratified sample of a problem's output elements judged against the fp64 reference with the
// same per-element bound as a full check, and the op's checksums over every element, after a
// single kernel run. What it costs is the sample's share of the reference plus a few passes over
// the operands, instead of the whole fp64 reference, its bound and a second kernel run.
#include <optional>
#include <span>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::detail {

/// The sample p is verified on under o, drawn from the filled inputs `ins` before the kernel
/// runs; nullopt when p is verified in full (verify=full, auto below sampled_verification_flops,
/// or an op, policy or reference that cannot be sampled: then r.verified.why says so when the
/// user asked for sampled).
std::optional<output_sample> draw_sample(const problem& p, std::span<const tensor> ins, const run_options& o,
                                         case_result& r);

/// Judges `outs`, one kernel run's outputs of p on `ins`, by the sample and the op's checksums
/// into r (its verdict, r.verified, r.not_applicable and the stage times).
void judge_by_sample(const problem& p, const fill_traits& ft, std::span<const tensor> ins, const output_sample& s,
                     const std::vector<tensor>& outs, const run_options& o, case_result& r);

}  // namespace opval::detail
