#pragma once
// Expands suites into cases and runs each: fill, execute, reference, bound, compare, verdict.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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

/// Who a case is: what makes it again. Built once (identify) and carried by its result, so that
/// the runner, the worker, the journal and the reporters name the case alike, and its repro
/// is rendered from it (render_repro), never patched.
struct case_identity {
  std::string descriptor;   ///< canonical problem text
  std::string op;
  std::string contract;
  std::uint64_t seed = 0;
  std::string backend;
  /// How to make the backend again: its registered name or its plugin's path (empty for an
  /// object only its caller has, a Python kernel).
  backend_ref made_from;
  /// The alternative reference the case was judged against (its name; empty: the op's own fp64
  /// reference), and how to make it again.
  std::string reference;
  backend_ref reference_from;
  /// The case options it ran with (seed and policy among them; no backend, no reference).
  run_options options;
  /// A judged case's array files (judge_files), when it is one.
  std::vector<std::string> input_files, output_files;
  std::string under;        ///< the checker the case must run under to reproduce ("valgrind"), if any
  std::string source;       ///< where the problem came from
};

/// The identity of problem `p` on the backend named `backend` with options `o`.
case_identity identify(const problem& p, const std::string& backend, const run_options& o,
                       const std::string& source = "", const backend_ref& made_from = {});

/// Everything recorded about one case: its identity, then what happened.
struct case_result : case_identity {
  std::string backend_version;
  execution_info exec;
  /// The tightest float contract whose bound the result meets (see observed_precision.hpp),
  /// measured for real backends' failures and for contracts that allow reduced precision;
  /// empty when not measured or none met. `observed_note` says which were tried.
  std::string observed_contract;
  std::string observed_note;
  /// How far the alternative reference lies from the own reference, output by output.
  std::string reference_note;
  verdict v;
  /// Set when the case is listed in a known-failures file (opval/known_failures.hpp): the
  /// recorded cause. A known case that fails does not fail the run.
  std::optional<std::string> known_failure;
  case_timings times;
  case_memory memory;       ///< the kernel's heap use and RSS change, leak check (heap_stats.hpp)
  std::string repro;        ///< the command that reproduces this case (render_repro of its identity)
  /// The checks that did not apply to this case, and why (judge(): those that rerun the kernel).
  std::string not_applicable;
};

/// The JSON record of one case (what the JSONL reporter writes on one line, schema in
/// docs/CLI.md).
std::string to_json_line(const case_result& r);
/// The case a JSON record describes: from_json_line(to_json_line(r)) writes back the same
/// line. Used to replay a journal (`opval run --resume`) and to carry results out of worker
/// processes. Throws opval::error naming the field when the line is not such a record.
case_result from_json_line(std::string_view line);
inline constexpr int result_schema_version = 1;

/// How a repro is written: for the shell (`opval repro ...`, or `opval judge ...` for judged
/// files), for `python -m opval run` (a framework adapter, a reference only Python makes), or
/// as an `opval.check(...)` call (a Python kernel).
enum class repro_style { cli, python_run, python_check };

/// What a Python caller names its own way: the backend as it was given ('torch',
/// 'module:function'; for python_check, the kernel's name), the reference as given
/// ('torch@contract'), and more keywords for the call ("arrays='torch'").
struct repro_names {
  std::string backend;
  std::string reference;
  std::string keywords;
};

/// The command (or call) that reproduces the case `id`: its descriptor, seed, backend, policy,
/// reference, every case option that differs from its default, and `--under` when it needs a
/// checker. Every descriptor and path is quoted for a POSIX shell or as a Python string.
std::string render_repro(const case_identity& id, repro_style style = repro_style::cli, const repro_names& names = {});

/// Runs one problem with one backend instance.
/// `made_from` (how a worker makes `b`: its name or plugin path) goes into the identity.
case_result run_case(const problem& p, backend& b, const run_options& o, const std::string& source = "",
                     const backend_ref& made_from = {});

/// A backend that is itself an emulation of an op's contract (used for relative-to-sim).
std::unique_ptr<backend> make_sim_backend();


}  // namespace opval
