#pragma once
// The judging stage of a case: from the outputs, the fp64 reference and the policy to each
// output's verdict (the bound or tolerance per element, the comparison, the decision). Shared
// by a kernel run (runner.cpp) and by judge() of tensors the user already has (judge.cpp).
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/alternative_reference.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::detail {

/// How one output is judged: its total bound per element (empty for none), the non-rounding
/// part for the bias test, why the bias test does not apply ("" when it does) and the bound's
/// description.
struct judgement {
  tensor total;
  tensor compute;  // shares the error bound's storage
  std::string bias_skip;
  std::string bound_text;
};

/// What judge_outputs works on: the problem's inputs as the kernel got them, the op's fp64
/// reference outputs, the alternative reference's (null: judged against the own reference)
/// and the outputs under judgement.
struct judging_input {
  const problem& p;
  const fill_traits& ft;
  std::span<const tensor> ins;
  const std::vector<tensor>& refs;
  const reference_values* alt = nullptr;
  const std::vector<tensor>& outs;
  /// Measure the tightest contract the outputs meet (observed_precision.hpp) when a case fails
  /// or its contract rounds inputs; off for sim, whose results are the contract's by design.
  bool observe_precision = true;
  /// Sampled verification: where an element of output i (its index in `outs[i]`) lies in the
  /// problem the sample was drawn from, so that worst elements and reasons name that position.
  std::function<dims(std::size_t output, const dims& index)> place;
};

/// Whether contract c may legitimately give another special value than the exact result on
/// the stored inputs: it rounds its inputs (tf32, f32@bf16), converts them to a narrower acc
/// (f32 inputs in f16) or flushes subnormals (denorm=ftz), so a tiny input becomes 0 and
/// 0*Inf = NaN where the exact inputs give Inf (or x/0 = Inf where they give a finite
/// quotient); or it rounds toward zero, so a result beyond the largest finite value saturates
/// at it instead of overflowing.
bool contract_changes_specials(const contract& c);

/// The contract's own emulation (the sim backend, op_spec::simulate) of a case's outputs on
/// its inputs, run once when first asked: relative-to-sim's yardstick, and the special values
/// a contract that changes them allows (compare_input::contract_values).
class contract_emulation {
 public:
  explicit contract_emulation(const judging_input& in) : in_(in) {}
  const std::vector<tensor>& outputs();

 private:
  const judging_input& in_;
  std::vector<tensor> outs_;
  bool ran_ = false;
};

/// Judges every output under o's policy into r.v (state, reason, policy text, per output
/// verdicts), r.times.bound / compare, r.reference_note and r.observed_*; returns each output's
/// judgement (the perturbation check reads their bounds).
std::vector<judgement> judge_outputs(const judging_input& in, const run_options& o, case_result& r);

/// Each output's bound per element at `inputs`, as judge() would hold outputs of `p` on them
/// to under o's policy (the op's error bound plus the output rounding, for the default
/// policy): graph triage carries the bounds of a fused region's nodes to its output.
std::vector<tensor> bounds_at(const problem& p, std::span<const tensor> inputs, const run_options& o);

/// The alternative reference's outputs for `ins` into `alt` (nothing to do without one, in
/// o.reference); false when it failed, the case then SKIPPED with the reason in r.
bool alternative_outputs(const problem& p, std::span<const tensor> ins, const run_options& o, reference_values& alt,
                         case_result& r);

/// The worse of two states (crash and timeout worst, then mistrusted, failed, unimplemented,
/// skipped, passed).
state worst_state(state a, state b);

/// "[i,j,k]".
std::string format_index(const dims& index);

/// Tensors for the op's fp64 reference outputs: f64, the outputs' shapes.
std::vector<tensor> reference_tensors(const std::vector<operand>& outputs);

}  // namespace opval::detail
