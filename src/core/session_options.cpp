// The options of a session (opval/session.hpp): the one table the CLI registers its options
// from, the worker protocol encodes the per-case ones with, and the Python layer's keywords
// and docs/CLI.md are checked against (tests/cpp/test_session_options.cpp,
// tests/python/test_options.py).
#include "opval/session.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace opval {
namespace {

// Whether the option's value names a file or folder (its value name says FILE, PATH, DIR or
// JOURNAL): an empty one is a mistake (an unset variable in a script), not "none".
bool names_a_path(const option_def& d) {
  return std::ranges::any_of(std::array<std::string_view, 4>{"FILE", "PATH", "DIR", "JOURNAL"},
                             [&](std::string_view word) { return d.value_name.find(word) != std::string_view::npos; });
}

constexpr unsigned run_repro_bench = for_run | for_repro | for_bench;
constexpr unsigned every_command = run_repro_bench | for_judge;
constexpr unsigned run_coverage = for_run | for_coverage;
constexpr unsigned run_and_check = in_opval_run | in_opval_check;
constexpr unsigned every_function = run_and_check | in_opval_judge;

std::vector<option_def> selection_options() {
  using S = option_stage;
  return {
      {.flag = "--op", .keyword = "ops", .value_name = "OP", .help = "only these ops (repeatable)",
       .stage = S::selection, .commands = for_run | for_bench | for_coverage, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::vector<std::string>& { return p.selection.ops; }},
      {.flag = "--tag", .keyword = "tag", .value_name = "smoke|regression|generated",
       .help = "suite to run when no --problems: smoke (the default, or the --tier's suite), regression, or "
               "generated (run: made for the backends under test from their declared support, with a coverage "
               "report; docs/COVERAGE.md)",
       .stage = S::selection, .commands = for_run | for_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> std::string& { return p.selection.tag; }},
      {.flag = "--suite-budget", .keyword = "suite_budget", .value_name = "N",
       .help = "cases per op and contract of a generated suite: the base and every feature value alone always "
               "run, pairs of values are combined until all are covered or N cases are made",
       .stage = S::selection, .commands = run_coverage, .python = run_and_check,
       .field = +[](session_plan& p) -> int& { return p.selection.suite_budget; }, .min = 1, .max = 1000000,
       .show_default = true},
      {.flag = "--contract", .keyword = "contracts", .value_name = "DT",
       .help = "only cases with this dt contract, e.g. bf16 or f16:f32:f16 (repeatable)", .stage = S::selection,
       .commands = for_run | for_bench | for_coverage, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::vector<std::string>& { return p.selection.contracts; }},
      {.flag = "--problems", .keyword = "problems", .value_name = "FILE|DESCRIPTOR",
       .help = "a batch file (one descriptor per line) or a descriptor string (repeatable)", .stage = S::selection,
       .commands = for_run | for_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> std::vector<std::string>& { return p.selection.problems; }},
  };
}

std::vector<option_def> judging_options() {
  using S = option_stage;
  return {
      {.flag = "--reference", .keyword = "reference", .value_name = "B|PATH",
       .help = "judge against this backend (a name, or a plugin's path) run at the problem's contract,"
               " with twice the bound, instead of opval's fp64 reference (docs/REFERENCES.md)",
       .stage = S::backends, .commands = every_command, .python = every_function,
       .field = +[](session_plan& p) -> std::string& { return p.reference; }},
      {.flag = "--policy", .keyword = "policy", .value_name = "P",
       .help = "tolerance policy: bound, relative-to-sim[:m=M], exact, fixed:rtol=R,atol=A", .stage = S::per_case,
       .commands = every_command, .python = every_function,
       .field = +[](session_plan& p) -> policy& { return p.run.pol; }, .show_default = true},
      {.flag = "--worst", .keyword = "worst", .value_name = "K", .help = "number of worst elements recorded per output",
       .stage = S::per_case, .commands = every_command, .python = every_function,
       .field = +[](session_plan& p) -> int& { return p.run.worst_k; }, .min = 0, .max = 1000, .show_default = true},
      {.flag = "--jsonl", .keyword = "jsonl", .value_name = "FILE", .help = "also write one JSON record per case to FILE",
       .stage = S::session, .commands = every_command | for_coverage | for_merge, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.jsonl; }},
  };
}

std::vector<option_def> case_options() {
  using S = option_stage;
  return {
      {.flag = "--backend", .keyword = "backends", .value_name = "B[,B...]",
       .help = "backends under test, comma-separated or repeated; several are compared side by"
               " side on the same inputs (default sim; see `opval list backends`)",
       .stage = S::backends, .commands = run_repro_bench | for_coverage, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::vector<std::string>& { return p.backends; }, .delimiter = ','},
      {.flag = "--plugin", .keyword = "plugin", .value_name = "PATH",
       .help = "also test the kernel plugin (shared library, see docs/PLUGINS.md); alone when"
               " no --backend is given",
       .stage = S::backends, .commands = run_repro_bench | for_coverage, .python = 0,
       .field = +[](session_plan& p) -> std::string& { return p.plugin; }},
      {.flag = "--seed", .keyword = "seed", .value_name = "N",
       .help = "seed of the input fill (and of a generated suite's combinations)", .stage = S::per_case,
       .commands = run_repro_bench | for_coverage, .python = run_and_check,
       .field = +[](session_plan& p) -> std::uint64_t& { return p.run.seed; }, .show_default = true},
      {.flag = "--no-perturb", .keyword = "perturb", .help = "skip the MISTRUSTED check that re-runs with a perturbed input",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> bool& { return p.run.perturb_check; }, .negated = true},
      {.flag = "--leak-check", .keyword = "leak_check", .value_name = "N",
       .help = "run each kernel N more times and fail it when every run grows the live heap (a leak; 0 = off)",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> int& { return p.run.leak_check; }, .min = 0, .max = 1000,
       .show_default = true},
      {.flag = "--max-memory", .keyword = "max_memory", .value_name = "GB",
       .help = "SKIP a case whose estimated peak memory exceeds GB gigabytes, before allocating anything (0: half "
               "of the memory available when it starts)",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> double& { return p.run.max_memory_gb; }, .min = 0, .show_default = true},
      {.flag = "--no-guard", .keyword = "guard", .help = "kernel tensors in plain memory: no guard pages, no canaries",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> bool& { return p.run.guard; }, .negated = true},
      {.flag = "--guard-before", .keyword = "guard_before",
       .help = "put the 64 KiB guard before each kernel tensor (catches reads and writes before its start)",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> guard_side& { return p.run.guard_at; }},
      {.flag = "--guard-tight", .keyword = "guard_tight",
       .help = "end each kernel tensor exactly at its guard, without the alignment slack: a read 1 byte past traps at "
               "every size (the tensors keep only their elements' alignment)",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> bool& { return p.run.guard_tight; }},
      {.flag = "--verify", .keyword = "verify", .value_name = "full|sampled|auto",
       .help = "full: every output element against the fp64 reference; sampled: a stratified sample of elements "
               "against it plus checksums over all (matmul), one kernel run; auto: sampled from 8e9 FLOPs up "
               "(docs/NUMERICS.md, \"Sampled verification\")",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> std::string& { return p.run.verify; }, .choices = "auto full sampled",
       .show_default = true},
      {.flag = "--no-poison", .keyword = "poison",
       .help = "no poisoned outputs and no second kernel run (never-written and determinism checks)",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> bool& { return p.run.poison_check; }, .negated = true},
      {.flag = "--no-input-check", .keyword = "input_check", .help = "do not hash inputs to catch a kernel writing them",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> bool& { return p.run.input_check; }, .negated = true},
      {.flag = "--threads", .keyword = "threads", .value_name = "N[,N...]",
       .help = "also run each kernel with each of these OpenMP thread counts; outputs must match bitwise",
       .stage = S::per_case, .commands = run_repro_bench, .python = run_and_check,
       .field = +[](session_plan& p) -> std::vector<int>& { return p.run.threads; }, .min = 1, .max = 4096,
       .delimiter = ','},
      {.flag = "--known-failures", .keyword = "known_failures", .value_name = "FILE",
       .help = "cases known to fail on a backend (a documented library disagreement): shown as"
               " FAILED (known), they do not fail the run",
       .stage = S::session, .commands = run_repro_bench, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.known_failures; }},
      {.flag = "--under", .keyword = "under", .value_name = "asan|valgrind",
       .help = "rerun this command as the ASan+UBSan build (build-asan/opval) or under valgrind"
               " memcheck (a case during which memcheck reports an error FAILS); docs/SAFETY.md",
       .stage = S::session, .commands = run_repro_bench, .python = 0,
       .field = +[](session_plan& p) -> std::string& { return p.under; }, .choices = "asan valgrind"},
      {.flag = "--isolation", .keyword = "isolation", .value_name = "process|none",
       .help = "process: run each case in a worker process, so a crash or hang is a CRASH or"
               " TIMEOUT verdict and the run goes on; none: in the opval process itself",
       .stage = S::session, .commands = every_command | for_coverage, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.isolation; }, .choices = "process none",
       .show_default = true},
      {.flag = "--timeout", .keyword = "timeout", .value_name = "SECONDS",
       .help = "per-case time limit in seconds under process isolation, plus 10 s per GFLOP of"
               " the case; past it the worker is killed and the case is a TIMEOUT",
       .stage = S::session, .commands = every_command | for_coverage, .python = in_opval_run,
       .field = +[](session_plan& p) -> double& { return p.timeout; }, .min = 0, .min_exclusive = true,
       .show_default = true},
  };
}

std::vector<option_def> command_options() {
  using S = option_stage;
  return {
      {.flag = "-v,--verbose", .keyword = "verbose",
       .help = "explain every case, not only those that did not pass (coverage: list every feature value)",
       .stage = S::session, .commands = run_coverage | for_merge, .python = run_and_check,
       .field = +[](session_plan& p) -> bool& { return p.verbose; }},
      {.flag = "--resume", .keyword = "resume", .value_name = "JOURNAL",
       .help = "finish the run whose --jsonl journal is JOURNAL (same selection and options): cases"
               " it records are not rerun, the others are appended; the report covers the whole run",
       .stage = S::session, .commands = for_run, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.resume; }},
      {.flag = "--shard", .keyword = "shard", .value_name = "I/N|auto",
       .help = "run only shard I of N (from 0) of the cases, balanced by their estimated cost; auto: the shard "
               "the engine's environment names (Bazel, googletest, a Slurm array, a Kubernetes Indexed Job with "
               "OPVAL_SHARD_COUNT); `opval merge` joins the shards' --jsonl journals (docs/FLEET.md)",
       .stage = S::session, .commands = for_run, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.shard; }},
      {.flag = "-q,--quiet", .keyword = "quiet",
       .help = "print only the short summary of failures (one line each: state, repro, reason) and the totals",
       .stage = S::session, .commands = for_run | for_merge, .python = 0,
       .field = +[](session_plan& p) -> bool& { return p.quiet; }},
      {.flag = "--junit", .keyword = "junit", .value_name = "FILE",
       .help = "also write JUnit XML to FILE (as pytest's --junitxml: a testcase per problem and backend, failures "
               "with their reason and repro, refusals and known failures as skipped)",
       .stage = S::session, .commands = for_run | for_bench | for_merge, .python = 0,
       .field = +[](session_plan& p) -> std::string& { return p.junit; }},
      {.flag = "--history", .keyword = "history", .value_name = "FILE",
       .help = "record the results in this SQLite run history (made when missing; a shard records nothing: "
               "`opval merge --history` records the whole run); `opval history` asks it (docs/FLEET.md)",
       .stage = S::session, .commands = for_run | for_bench | for_merge, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.history; }},
      {.flag = "--commit", .keyword = "commit", .value_name = "SHA",
       .help = "the commit of the code under test, recorded with --history (default: OPVAL_COMMIT, GITHUB_SHA, "
               "CI_COMMIT_SHA, GIT_COMMIT, BUILD_SOURCEVERSION, BUILDKITE_COMMIT, else `git rev-parse HEAD` here)",
       .stage = S::session, .commands = for_run | for_bench | for_merge, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.commit; }},
      {.flag = "--tier", .keyword = "tier", .value_name = "NAME",
       .help = "the run's tier, recorded with --history for `opval history tiers`; smoke (--tag smoke, --budget "
               "1m), regression (--tag regression, --budget 10m) and nightly (--tag generated, --seeds 3, no "
               "budget) also choose the suite, seeds and budget that --tag, --seeds and --budget do not give",
       .stage = S::session, .commands = for_run | for_bench | for_merge, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.tier; }},
      {.flag = "--label", .keyword = "label", .value_name = "TEXT",
       .help = "free text recorded with --history (a branch, a pipeline, a machine class)",
       .stage = S::session, .commands = for_run | for_bench | for_merge, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.label; }},
      {.flag = "--budget", .keyword = "budget", .value_name = "DURATION",
       .help = "choose the cases that fit DURATION (10m, 90s, 1h30m, or seconds) by their recorded (--history) "
               "or estimated times, most important first: recent failures, flaky cases, the ops and backends "
               "--changes touches, then the most features covered; say what was left out and the coverage lost "
               "(default: the --tier's, else none; 0: none)",
       .stage = S::session, .commands = for_run, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.budget; }},
      {.flag = "--changes", .keyword = "changes", .value_name = "REV|FILE",
       .help = "with --budget, first the cases of the ops and backends a change touches: `git diff --name-only "
               "REV` here, or a file of changed paths (one per line), mapped to op and backend folders",
       .stage = S::session, .commands = for_run, .python = in_opval_run,
       .field = +[](session_plan& p) -> std::string& { return p.changes; }},
      {.flag = "--seeds", .keyword = "seeds", .value_name = "N",
       .help = "run each case at N seeds: --seed, --seed + 1, ... (other data each; default 1, the nightly tier 3)",
       .stage = S::session, .commands = for_run, .python = in_opval_run,
       .field = +[](session_plan& p) -> int& { return p.seeds; }, .min = 1, .max = 1000},
      {.flag = "--tightness", .keyword = "tightness", .help = "end with a table of observed error / bound per op and contract",
       .stage = S::session, .commands = for_run | for_merge, .python = 0,
       .field = +[](session_plan& p) -> bool& { return p.tightness; }},
      {.flag = "--inputs", .keyword = "inputs", .value_name = "FILE", .help = "the problem's inputs (repeatable)",
       .stage = S::selection, .commands = for_judge, .python = in_opval_judge,
       .field = +[](session_plan& p) -> std::vector<std::string>& { return p.judge_inputs; }, .required = true},
      {.flag = "--outputs", .keyword = "outputs", .value_name = "FILE", .help = "the outputs to judge (repeatable)",
       .stage = S::selection, .commands = for_judge, .python = in_opval_judge,
       .field = +[](session_plan& p) -> std::vector<std::string>& { return p.judge_outputs; }, .required = true},
  };
}

std::vector<option_def> bench_options() {
  using S = option_stage;
  const auto bench = [](option_def d) {
    d.stage = S::bench;
    d.commands = for_bench;
    return d;
  };
  return {
      bench({.flag = "--target-ci", .value_name = "PCT",
             .help = "sample until the 95% CI of the median is within +-PCT percent of it (or the budget runs out)",
             .field = +[](session_plan& p) -> double& { return p.bench.target_ci_percent; }, .min = 0.001, .max = 100,
             .show_default = true}),
      bench({.flag = "--budget", .value_name = "SECONDS", .help = "time budget per case, warm-up included, seconds",
             .field = +[](session_plan& p) -> double& { return p.bench.budget; }, .min = 0.001, .max = 86400,
             .show_default = true}),
      bench({.flag = "--min-samples", .value_name = "N", .help = "never stop for the CI target before this many samples",
             .field = +[](session_plan& p) -> std::uint64_t& { return p.bench.min_samples; }, .min = 2, .max = 1e8,
             .show_default = true}),
      bench({.flag = "--repetitions", .value_name = "R",
             .help = "independent samplings per case (each with its warm-up and stopping rule), pooled; each one's"
                     " median is recorded, a median over 5% off the pooled one is warned of, and compare tests them",
             .field = +[](session_plan& p) -> int& { return p.bench.repetitions; }, .min = 1, .max = 1000,
             .show_default = true}),
      bench({.flag = "--min-time", .value_name = "SECONDS", .help = "nor before sampling this long, seconds",
             .field = +[](session_plan& p) -> double& { return p.bench.min_time; }, .min = 0, .max = 86400,
             .show_default = true}),
      bench({.flag = "--warmup", .value_name = "SECONDS", .help = "run the kernel at least this long before sampling, seconds",
             .field = +[](session_plan& p) -> double& { return p.bench.warmup; }, .min = 0, .max = 3600,
             .show_default = true}),
      bench({.flag = "--machine",
             .help = "measure this machine's FMA peak per type and its memory bandwidth (STREAM copy and triad), on one"
                     " thread and on all, save them to --machine-file, and exit; later runs show each result's % of its roof",
             .field = +[](session_plan& p) -> bool& { return p.bench.machine; }}),
      bench({.flag = "--machine-file", .value_name = "PATH", .help = "where the machine's peaks are kept",
             .field = +[](session_plan& p) -> std::string& { return p.bench.machine_file; }, .show_default = true}),
      bench({.flag = "--stream-mib", .value_name = "MIB",
             .help = "with --machine: each STREAM array's size (default 4 x the last-level cache)",
             .field = +[](session_plan& p) -> std::uint64_t& { return p.bench.stream_mib; }, .min = 1, .max = 1 << 20}),
      bench({.flag = "--axis", .value_name = "NAME=V1,V2,...",
             .help = "sweep: repeat the cases over NAME's values; --problems templates use {NAME}; `threads` and"
                     " `backend` are the run's own (repeatable; axes combine as a cartesian product)",
             .field = +[](session_plan& p) -> std::vector<std::string>& { return p.bench.axes; }}),
      bench({.flag = "--zip", .value_name = "A,B[,...]",
             .help = "sweep: these axes advance together instead of multiplying (repeatable)",
             .field = +[](session_plan& p) -> std::vector<std::string>& { return p.bench.zips; }}),
      bench({.flag = "--counters",
             .help = "after timing, count cycles, instructions, cache misses (IPC) and software events per call"
                     " over ~50 ms of calls (perf_event_open; says so where the machine exposes none)",
             .field = +[](session_plan& p) -> bool& { return p.bench.counters; }}),
      bench({.flag = "--cache", .value_name = "hot|cold",
             .help = "hot: the same buffers, short kernels batched; cold: flush twice the last-level cache before"
                     " every sample, one call per sample",
             .field = +[](session_plan& p) -> std::string& { return p.bench.cache; }, .choices = "hot cold",
             .show_default = true}),
      bench({.flag = "--csv", .value_name = "FILE", .help = "also write one CSV row per case to FILE",
             .field = +[](session_plan& p) -> std::string& { return p.bench.csv; }}),
      bench({.flag = "--omp-threads", .value_name = "N",
             .help = "OpenMP threads while timing (default: as the environment sets them)",
             .field = +[](session_plan& p) -> int& { return p.bench.omp_threads; }, .min = 1, .max = 4096}),
      bench({.flag = "--affinity", .value_name = "CPUS",
             .help = "pin the run (this process, its worker and every library thread) to these CPUs, e.g. 0-3,6",
             .field = +[](session_plan& p) -> std::string& { return p.bench.affinity; }}),
  };
}

std::vector<option_def> all_options() {
  std::vector<option_def> all;
  for (auto part : {selection_options, judging_options, case_options, command_options, bench_options})
    for (option_def& d : part()) all.push_back(std::move(d));
  return all;
}

/// A value as the CLI takes it, or as a Python literal.
template <class T>
std::string value_text(const T& v, bool python) {
  if constexpr (std::is_same_v<T, bool>) return python ? (v ? "True" : "False") : "";
  else if constexpr (std::is_same_v<T, guard_side>) return python ? (v == guard_side::before ? "True" : "False") : "";
  else if constexpr (std::is_same_v<T, policy>) return python ? fmt::format("'{}'", v.to_string()) : v.to_string();
  else if constexpr (std::is_same_v<T, std::vector<int>>)
    return python ? fmt::format("[{}]", fmt::join(v, ", ")) : fmt::format("{}", fmt::join(v, ","));
  else if constexpr (std::is_arithmetic_v<T>) return fmt::format("{}", v);
  else if constexpr (std::is_same_v<T, std::string>) return python ? fmt::format("'{}'", v) : v;  // a word of its choices
  else return "";  // no per-case option is a list of texts
}

/// A number of type T from the whole of `text`, or nullopt.
template <class T>
std::optional<T> number_from(std::string_view text) {
  T value{};
  if constexpr (std::is_floating_point_v<T>) {
    const std::string copy(text);
    char* end = nullptr;
    value = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value)) return std::nullopt;
  } else {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  }
  return value;
}

/// The numeric rule of an option whose values are T: "an integer from 0 to 1000", "a number above 0".
template <class T>
std::string number_rule(const option_def& d) {
  const T low = std::isfinite(d.min) ? static_cast<T>(d.min) : std::numeric_limits<T>::lowest();
  const T high = std::isfinite(d.max) ? static_cast<T>(d.max) : std::numeric_limits<T>::max();
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(d.max)) return fmt::format("a number {} {:g}", d.min_exclusive ? "above" : "of at least", low);
    return fmt::format("a number from {:g} to {:g}", low, high);
  } else {
    return fmt::format("an integer from {} to {}", low, high);
  }
}

template <class T>
std::string number_error(const option_def& d, std::string_view text) {
  const std::optional<T> v = number_from<T>(text);
  const bool ok = v && (!std::isfinite(d.min) || (d.min_exclusive ? *v > d.min : *v >= d.min)) &&
                  (!std::isfinite(d.max) || *v <= d.max);
  return ok ? std::string() : fmt::format("expects {}, got '{}'", number_rule<T>(d), text);
}

}  // namespace

std::string option_value_error(const option_def& d, std::string_view text) {
  if (text.empty() && names_a_path(d)) return "an empty path: give a file name";
  return std::visit(
      [&]<class T>(plan_field<T>) -> std::string {
        if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::vector<int>>) return number_error<int>(d, text);
        else if constexpr (std::is_same_v<T, std::uint64_t>) return number_error<std::uint64_t>(d, text);
        else if constexpr (std::is_same_v<T, double>) return number_error<double>(d, text);
        else if constexpr (std::is_same_v<T, std::string>) {
          if (d.choices.empty()) return {};
          for (std::size_t from = 0, to; from < d.choices.size(); from = to + 1) {
            to = std::min(d.choices.find(' ', from), d.choices.size());
            if (d.choices.substr(from, to - from) == text) return {};
          }
          return fmt::format("expects one of: {}, got '{}'", d.choices, text);
        } else {
          return {};  // flags; a policy is checked by parse_policy
        }
      },
      d.field);
}

std::string option_value_rule(const option_def& d) {
  return std::visit(
      [&]<class T>(plan_field<T>) -> std::string {
        if (!std::isfinite(d.min) && !std::isfinite(d.max)) return {};
        if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::vector<int>>) return number_rule<int>(d);
        else if constexpr (std::is_same_v<T, std::uint64_t>) return number_rule<std::uint64_t>(d);
        else if constexpr (std::is_same_v<T, double>) return number_rule<double>(d);
        else return {};
      },
      d.field);
}

std::string changed_case_options(const run_options& o, bool python) {
  session_plan given, defaults;
  given.run = o;
  std::string out;
  for (const option_def& d : session_option_table()) {
    if (d.stage != option_stage::per_case || d.keyword == "seed" || d.keyword == "policy") continue;
    std::visit(
        [&](auto field) {
          if (value_text(field(given), true) == value_text(field(defaults), true)) return;
          const std::string value = value_text(field(given), python);
          if (python) out += fmt::format(", {}={}", d.keyword, value);
          else out += fmt::format(" {}{}", d.flag, value.empty() ? "" : " " + value);
        },
        d.field);
  }
  return out;
}

const std::vector<option_def>& session_option_table() {
  static const std::vector<option_def> table = all_options();
  return table;
}

}  // namespace opval
