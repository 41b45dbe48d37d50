#pragma once
// Expands suites into cases and runs each: fill, execute, reference, bound, compare, verdict.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opval/backend.hpp"
#include "opval/policy.hpp"
#include "opval/problem.hpp"
#include "opval/verdict.hpp"

namespace opval {

/// Heap use of one measured section. Bytes are usable sizes (malloc_usable_size), so a block
/// counts a little more than was asked for (64 KiB asked = 65544 bytes with glibc).
struct heap_stats {
  bool measured = false;          ///< false: no allocator hooks in this process, all zero
  std::int64_t peak_bytes = 0;    ///< highest live heap above the section's start
  std::int64_t total_bytes = 0;   ///< bytes of all allocations in the section
  std::int64_t allocations = 0;   ///< number of allocations (a realloc counts as one)
  std::int64_t releases = 0;      ///< number of blocks released (any age)
  std::int64_t net_bytes = 0;     ///< live heap at the end minus at the start (< 0: freed older blocks)
  /// Live blocks at the end minus at the start.
  std::int64_t net_blocks() const { return allocations - releases; }
};

/// Memory use of a backend run: the set-up (prepare) and the kernel (execute + synchronize)
/// apart, since the set-up's allocations (primitives, plans, device buffers) are the
/// backend's, not the kernel's.
struct run_memory {
  heap_stats prepare;
  heap_stats kernel;
  std::optional<std::int64_t> kernel_rss_delta;  ///< resident set change across the kernel, bytes
};

/// The outcome of running a kernel N more times to look for leaks (see check_leaks).
struct leak_check {
  int runs = 0;                             ///< 0 = not checked
  std::vector<std::int64_t> growth;         ///< live heap growth of each run, bytes
  std::vector<std::int64_t> growth_blocks;  ///< live block count growth of each run
  bool leaks = false;                       ///< every run left more live blocks and bytes
  std::int64_t bytes_per_call = 0;          ///< the smallest growth, when leaking
  std::string finding;                      ///< the verdict's reason when leaking, else why not checked
};

/// Everything measured about a case's memory.
struct case_memory {
  run_memory run;   ///< the case's main run
  leak_check leak;
};

/// An alternative reference: another implementation that cases are judged against instead of
/// the op's own fp64 reference (docs/REFERENCES.md, "Alternative references"): a framework in
/// float64, as precise as the op's own reference, or any backend at its own contract, whose
/// rounding error then widens the tolerance (twice the bound). Its functions are in
/// src/core/alternative_reference.hpp.
struct alternative_reference {
  std::shared_ptr<backend> impl;
  /// How a worker process makes impl again; empty for one made in Python, which then runs in
  /// the process that made it only.
  backend_ref ref;
  /// True: impl computes in float64 and is handed f64 output tensors. False: impl runs the
  /// problem at its contract, on output tensors of the contract's types.
  bool float64 = false;

  /// "torch (float64)", "openblas (at the contract)".
  std::string name() const;
};

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
  /// Guard after: each tensor ends exactly at its guard, unaligned, so that reads 1 byte past
  /// trap at every size (by default the end is 64-byte aligned, the slack holding canaries).
  bool guard_tight = false;
  /// Outputs pre-filled with poison and the kernel run twice: never-written elements and
  /// run-to-run differences fail (the latter unless the contract has deterministic=0).
  bool poison_check = true;
  bool input_check = true;   ///< inputs hashed before and after each run: a write fails
  std::vector<int> threads;  ///< repeat the kernel with each OpenMP thread count: bitwise equal
  /// Runs the kernel this many more times and fails a case whose every run grows the live
  /// heap (a leak); 0 = off. Needs the allocator hooks (core/heap_stats.hpp).
  int leak_check = 0;
  /// A case whose estimated peak memory exceeds this many GB (1e9 bytes) is SKIPPED before
  /// anything is allocated (core/case_budget.hpp); 0: half of the memory available.
  double max_memory_gb = 0;
  /// Judge against this implementation instead of the op's own fp64 reference
  /// (core/alternative_reference.hpp); the own reference is still computed, to say how far
  /// the alternative lies from it.
  std::optional<alternative_reference> reference;
  /// How outputs are verified (docs/NUMERICS.md, "Sampled verification"): "full" (every element
  /// against the fp64 reference), "sampled" (a stratified sample of elements against it, the
  /// op's checksums over every element, one kernel run) or "auto" (sampled from
  /// sampled_verification_flops up, where the op can sample the problem).
  std::string verify = "auto";
};

/// The size (FLOPs, op_counts::flops) from which `verify=auto` verifies by sample and checksums.
inline constexpr double sampled_verification_flops = 8.0e9;

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

/// Where a case of a sharded run (`opval run --shard I/N`, docs/FLEET.md) stands: its shard,
/// and its place in the whole run, from which `opval merge` orders the shards' records as the
/// unsharded run writes them and finds a shard missing, duplicated or unfinished.
struct shard_position {
  std::int64_t index = 0;        ///< I, from 0
  std::int64_t count = 1;        ///< N
  std::int64_t case_index = 0;   ///< the case's place in the whole run, from 0
  std::int64_t cases = 0;        ///< the whole run's cases
  std::int64_t shard_cases = 0;  ///< this shard's cases
};

/// Why a run with a time budget (`opval run --budget`, docs/FLEET.md) chose a case, and its
/// place in the chosen order (from 0): the most important cases run first.
struct case_choice {
  std::int64_t rank = 0;
  std::string why;  ///< "failed at its latest run (commit 1a2b3c)", "covers 3 features no chosen case had: ..."
};

/// How a case's outputs were verified (run_options::verify): its method and what it guarantees.
struct verification {
  std::string method = "full";  ///< "full" or "sampled"
  std::string sample;           ///< sampled: the sample's size and what it is sure to contain
  std::string checksums;        ///< sampled: the checksums made and their detection guarantee ("" if none)
  std::string why;              ///< why this method (auto's choice, or why sampled fell back to full)
};

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
  /// Set when the case is listed in a known-failures file (core/known_failures.hpp): the
  /// recorded cause. A known case that fails does not fail the run.
  std::optional<std::string> known_failure;
  case_timings times;
  case_memory memory;       ///< the kernel's heap use and RSS change, leak check (heap_stats.hpp)
  std::string repro;        ///< the command that reproduces this case (render_repro of its identity)
  /// The checks that did not apply to this case, and why (judge(): those that rerun the kernel).
  std::string not_applicable;
  /// Set in a sharded run's records only (`opval merge` takes it off).
  std::optional<shard_position> shard;
  /// Set in the records of a run with a time budget: why it was chosen.
  std::optional<case_choice> choice;
  /// How the outputs were verified: "full" (recorded only when not), or "sampled" with what the
  /// sample and the checksums are sure to catch.
  verification verified;
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
/// The repro a result carries, or its identity's when it has none (a record read without one).
std::string repro_of(const case_result& r);

/// Runs one problem with one backend instance.
/// `made_from` (how a worker makes `b`: its name or plugin path) goes into the identity.
case_result run_case(const problem& p, backend& b, const run_options& o, const std::string& source = "",
                     const backend_ref& made_from = {});

/// A backend that is itself an emulation of an op's contract (used for relative-to-sim).
std::unique_ptr<backend> make_sim_backend();


}  // namespace opval
