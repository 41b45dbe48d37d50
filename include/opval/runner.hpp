#pragma once
// Expands suites into cases and runs each: fill, execute, reference, bound, compare, verdict.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "opval/alternative_reference.hpp"
#include "opval/backend.hpp"
#include "opval/guarded_allocator.hpp"
#include "opval/policy.hpp"
#include "opval/problem.hpp"
#include "opval/verdict.hpp"

namespace opval {

/// How cases run.
struct run_options {
  std::string backend = "sim";
  policy pol;
  std::uint64_t seed = 1;
  int worst_k = 5;
  bool perturb_check = true;  ///< re-run with a perturbed input to catch input-blind output
  /// Memory checks of the kernel under test (docs/SAFETY.md). `guard`: its tensors live in
  /// guarded mappings (guard page on side `guard_at`, canaries checked after each run).
  bool guard = true;
  guard_side guard_at = guard_side::after;
  /// Outputs pre-filled with poison and the kernel run twice: never-written elements and
  /// run-to-run differences fail (the latter unless the contract has deterministic=0).
  bool poison_check = true;
  bool input_check = true;   ///< inputs hashed before and after each run: a write fails
  std::vector<int> threads;  ///< repeat the kernel with each OpenMP thread count: bitwise equal
  /// Runs the kernel this many more times and fails a case whose every run grows the live
  /// heap (a leak); 0 = off. Needs the allocator hooks (opval/heap_stats.hpp).
  int leak_check = 0;
  /// Judge against this implementation instead of the op's own fp64 reference
  /// (opval/alternative_reference.hpp); the own reference is still computed, to say how far
  /// the alternative lies from it.
  std::optional<alternative_reference> reference;
};

/// Wall times of the stages of one case, in seconds. `prepare` is the backend's set-up
/// (primitive creation, kernel builds, uploads), `execute` the kernel launch to completion,
/// `device_kernel` the device's own timing of the kernel (negative when it has none).
struct case_timings {
  double fill = 0, prepare = 0, execute = 0, device_kernel = -1, reference = 0, bound = 0, compare = 0, total = 0;
};

/// Everything recorded about one case.
struct case_result {
  std::string descriptor;   ///< canonical problem text
  std::string op;
  std::string contract;
  std::uint64_t seed = 0;
  std::string backend;
  std::string backend_version;
  execution_info exec;
  /// The tightest float contract whose bound the result meets (see observed_precision.hpp),
  /// measured for real backends' failures and for contracts that allow reduced precision;
  /// empty when not measured or none met. `observed_note` says which were tried.
  std::string observed_contract;
  std::string observed_note;
  /// The alternative reference the case was judged against (its name; empty: the op's own fp64
  /// reference), and how far it lies from the own reference, output by output.
  std::string reference;
  std::string reference_note;
  verdict v;
  /// Set when the case is listed in a known-failures file (opval/known_failures.hpp): the
  /// recorded cause. A known case that fails does not fail the run.
  std::optional<std::string> known_failure;
  case_timings times;
  case_memory memory;       ///< the kernel's heap use and RSS change, leak check (heap_stats.hpp)
  std::string repro;        ///< the command that reproduces this case
  /// The checks that did not apply to this case, and why (judge(): those that rerun the kernel).
  std::string not_applicable;
  std::string source;       ///< where the problem came from
};

/// Runs one problem with one backend instance.
case_result run_case(const problem& p, backend& b, const run_options& o,
                     const std::string& source = "");

/// A backend that is itself an emulation of an op's contract (used for relative-to-sim).
std::unique_ptr<backend> make_sim_backend();

/// Problems of every registered op's suite `tag` (ops filtered by `op_filter` when non-empty).
std::vector<located_problem> suite_problems(const std::string& tag,
                                            const std::vector<std::string>& op_filter);

}  // namespace opval
