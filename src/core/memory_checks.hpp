#pragma once
// The memory checks around a kernel run (docs/SAFETY.md): guarded tensors and their canaries,
// poisoned outputs (never-written elements), bitwise repeat equality (determinism, across
// thread counts), input hashes (immutability) and leaks; and their bit-level helpers.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/backend_run.hpp"
#include "opval/backend.hpp"
#include "core/guarded_allocator.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"
#include "opval/tensor.hpp"

namespace opval::detail {

/// Fills t's whole storage with the poison pattern of `pass` (0 or 1): a signalling NaN with
/// a payload no arithmetic produces for the float types, distinct byte patterns otherwise.
void poison(tensor& t, int pass);

/// Where two runs' outputs disagree: `count` elements, the first at `first` (row-major).
struct element_finding {
  std::int64_t count = 0;
  std::int64_t first = -1;  ///< logical row-major position
  std::uint64_t bits_a = 0, bits_b = 0;  ///< the first element's bits in each tensor
};

/// Elements still holding pass 0's poison in `pass0` and pass 1's in `pass1`: never written.
element_finding never_written(const tensor& pass0, const tensor& pass1);

/// Elements of t still holding the poison of `pass`: never written by a run over it.
element_finding still_poisoned(const tensor& t, int pass);

/// Elements whose bits differ between a and b, ignoring those never written in both (when
/// a and b were poisoned with different passes; `a_pass`/`b_pass` say which, -1 = none).
element_finding bitwise_differences(const tensor& a, int a_pass, const tensor& b, int b_pass);

/// True when a and b (same type, shape and strides) hold the same storage bytes, padding
/// included: then neither never_written nor bitwise_differences can find anything, and one
/// memcmp spares their per-element walks in the common case of a correct kernel.
bool same_storage(const tensor& a, const tensor& b);

/// A hash of t's whole storage (padding included), for before/after comparison.
std::uint64_t storage_hash(const tensor& t);

/// Elements of `now` that differ bitwise from `original` (same type, shape and strides).
element_finding changed_elements(const tensor& now, const tensor& original);

/// "[i,j] (0x7fc00000 vs 0x3f800000)": the first finding's index and bits.
std::string describe_first(const tensor& t, const element_finding& f);

/// The tensors handed to the kernel under test and the memory checks around each of its runs
/// (docs/SAFETY.md): guarded storage whose canaries are checked after each run, poisoned
/// outputs, input hashes, repeated runs that must match bitwise. Findings are one-line texts,
/// each kept once.
class kernel_checks {
 public:
  kernel_checks(const problem& p, const run_options& o);

  /// Input tensors for the kernel (guarded and labelled when guards are on).
  std::vector<tensor> inputs(const std::vector<operand>& ops);
  /// Output tensors for the kernel, poisoned with pass `pass`'s pattern when poisoning is on.
  std::vector<tensor> outputs(const std::vector<operand>& ops, int pass);
  /// Hashes the filled inputs: every later run must leave them bitwise unchanged.
  void remember_inputs(const std::vector<tensor>& ins, const std::vector<operand>& ops);
  /// Runs the kernel, then checks the canaries of every tensor it got and the inputs' hashes;
  /// also when the kernel declines the problem (`declined`, rethrown).
  execution_info run(backend& b, std::span<const tensor> ins, std::span<tensor> outs,
                     backend_run_times* times = nullptr);
  /// Judges two runs of the kernel over outputs poisoned with pass 0 and pass 1: elements
  /// holding their poison in both were never written; the rest must match bitwise. When they
  /// do not, the kernel runs once more over each poison: a kernel that repeats its bits
  /// whenever the buffer starts alike did not overwrite its output, else it is nondeterministic.
  void compare_passes(backend& b, std::span<const tensor> ins, const std::vector<operand>& ops,
                      const std::vector<tensor>& pass0, const std::vector<tensor>& pass1);
  /// Judges one run of the kernel over outputs poisoned with pass 0 (sampled verification's
  /// single run): elements still holding the poison were never written. A kernel accumulating
  /// into its output reads the poison's NaN, which the checksums and the sample then see.
  void check_one_pass(const std::vector<operand>& ops, const std::vector<tensor>& pass0);
  /// Re-runs the kernel with each of the options' OpenMP thread counts; outputs must match
  /// `first`'s (computed with the default thread count) bitwise.
  void compare_thread_counts(backend& b, std::span<const tensor> ins, const std::vector<operand>& ops,
                             const std::vector<tensor>& first);
  /// The findings so far, "; "-separated ("" when none).
  std::string findings() const;

 private:
  struct watched_input {
    tensor t;  // shares the kernel's storage
    std::string name;
    std::uint64_t hash;
  };

  std::vector<tensor> make(const std::vector<operand>& ops, const char* role);
  void check_after_run(std::span<const tensor> ins, std::span<tensor> outs);
  bool must_repeat() const;
  void add(std::string finding);
  void note_never_written(const operand& op, const tensor& t, const element_finding& nw);
  void check_canaries(const tensor& t);
  void check_input(watched_input& w);

  const problem& p_;
  const run_options& o_;
  allocator& alloc_;
  std::vector<watched_input> watched_;
  std::vector<std::string> findings_;
  bool input_written_ = false;
};

/// Runs the kernel `runs` more times (core/heap_stats.hpp): a kernel whose every run grows
/// the live heap leaks, and fails its case whatever its numbers.
void check_leaks_into(const problem& p, backend& b, int runs, std::span<const tensor> ins, std::span<tensor> outs,
                      case_result& r);

}  // namespace opval::detail
