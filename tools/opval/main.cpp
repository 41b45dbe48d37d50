// The opval command line. Thin on purpose: parse arguments, resolve names through the
// registries, hand problems to the runner and results to the reporters. Every user error
// becomes one line on stderr and exit code 2; a case that fails or throws is a verdict and
// never stops the run. The help text here and docs/CLI.md describe the same commands
// (tests/cpp/test_cli.cpp checks that every option appears in both).
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "opval/backend.hpp"
#include "opval/bench.hpp"
#include "opval/bench_report.hpp"
#include "opval/machine_peaks.hpp"
#include "opval/sweep.hpp"
#include "opval/build_info.hpp"
#include "opval/environment.hpp"
#include "opval/threading.hpp"
#include "opval/error.hpp"
#include "opval/isolation.hpp"
#include "opval/judge.hpp"
#include "opval/known_failures.hpp"
#include "opval/op_spec.hpp"
#include "opval/policy.hpp"
#include "opval/problem.hpp"
#include "opval/reporter.hpp"
#include "opval/runner.hpp"
#include "opval/session.hpp"

namespace {

using namespace opval;

constexpr int exit_passed = 0;
constexpr int exit_failed = 1;
constexpr int exit_bad_input = 2;

// ---------------------------------------------------------------- arguments

struct list_args {
  std::string what;
  bool verbose = false;
};

/// Options shared by `run` and `repro`: how each case runs and where results go.
struct case_args {
  std::vector<std::string> backends;  ///< empty: sim, unless a plugin is given
  std::string plugin;                 ///< a kernel plugin: one more backend under test
  std::string reference;              ///< judge against this backend or plugin (at the contract)
  std::string policy = "bound";
  std::uint64_t seed = 1;
  int worst = 5;
  bool no_perturb = false;
  int leak_check = 0;  ///< extra kernel runs for leak detection (0 = off)
  bool no_guard = false, guard_before = false, no_poison = false, no_input_check = false;  ///< docs/SAFETY.md
  std::vector<int> threads;  ///< OpenMP thread counts the kernel is repeated with
  bool verbose = false;
  bool tightness = false;
  std::string jsonl;
  std::string known_failures;  ///< a known-failures file (opval/known_failures.hpp)
  std::string under;  ///< asan | valgrind: rerun this command under that checker (rerun_under)
  std::string isolation = "process";  ///< process: each case in a worker process; none: in this one
  double timeout = isolation_options{}.timeout_seconds;  ///< per case, seconds (process isolation)
};

struct run_args {
  case_args c;
  std::vector<std::string> ops, contracts, problems;
  std::string tag = "smoke";
  std::string resume;  ///< a journal to finish: its recorded cases are not run again
};

struct repro_args {
  case_args c;
  std::string descriptor;
};

/// `judge`: a verdict on arrays the user has (docs/JUDGE.md); of case_args, only the judging
/// options apply.
struct judge_args {
  case_args c;
  std::string descriptor;
  std::vector<std::string> inputs, outputs;
};

/// `bench`: the selection and checks of `run`, then the timing (docs/BENCHMARKING.md).
struct bench_args {
  run_args r;
  double target_ci_percent = 1;
  double budget = 5;
  std::size_t min_samples = 30;
  int repetitions = 1;
  bool counters = false;
  double min_time = 0.5;
  double warmup = 0.05;
  std::string cache = "hot";
  std::string csv;
  int omp_threads = 0;   ///< OpenMP threads while timing (0: as they are)
  std::string affinity;  ///< a cpulist the whole run is pinned to
  bool machine = false;  ///< measure the machine's peaks instead of benchmarking
  std::string machine_file = default_machine_file();
  std::size_t stream_mib = 0;  ///< --machine's STREAM arrays (0: 4 x the last-level cache)
  std::vector<std::string> axes;  ///< --axis NAME=V1,V2,...: a sweep
  std::vector<std::string> zips;  ///< --zip A,B: axes that advance together
};

/// `bench compare BASE NEW`.
struct compare_args {
  std::string base, next;
  double threshold_percent = 5;
  double alpha = 0.05;
};

/// CLI11 would silently wrap a negative or too large --seed into 64 bits.
CLI::Validator seed_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size())
          return "expects an integer from 0 to 18446744073709551615, got '" + text + "'";
        return {};
      },
      "UINT64");
}

/// Which problems: `run` and `bench` select alike.
void add_selection_options(CLI::App& cmd, run_args& a) {
  cmd.add_option("--op", a.ops, "only these ops (repeatable)")->type_name("OP");
  cmd.add_option("--tag", a.tag, "suite to run when no --problems: smoke or regression")->capture_default_str();
  cmd.add_option("--contract", a.contracts, "only cases with this dt contract, e.g. bf16 or f16:f32:f16 (repeatable)")
      ->type_name("DT");
  cmd.add_option("--problems", a.problems, "a batch file (one descriptor per line) or a descriptor string (repeatable)")
      ->type_name("FILE|DESCRIPTOR");
}

void add_bench_options(CLI::App& cmd, bench_args& a) {
  cmd.add_option("--target-ci", a.target_ci_percent,
                 "sample until the 95% CI of the median is within +-PCT percent of it (or the budget runs out)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 100.0))
      ->type_name("PCT");
  cmd.add_option("--budget", a.budget, "time budget per case, warm-up included, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0))
      ->type_name("SECONDS");
  cmd.add_option("--min-samples", a.min_samples, "never stop for the CI target before this many samples")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000000))
      ->type_name("N");
  cmd.add_option("--repetitions", a.repetitions,
                 "independent samplings per case (each with its warm-up and stopping rule), pooled; each one's"
                 " median is recorded, a median over 5% off the pooled one is warned of, and compare tests them")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000))
      ->type_name("R");
  cmd.add_option("--min-time", a.min_time, "nor before sampling this long, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0))
      ->type_name("SECONDS");
  cmd.add_option("--warmup", a.warmup, "run the kernel at least this long before sampling, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0))
      ->type_name("SECONDS");
  cmd.add_flag("--machine", a.machine,
               "measure this machine's FMA peak per type and its memory bandwidth (STREAM copy and triad), on one"
               " thread and on all, save them to --machine-file, and exit; later runs show each result's % of its roof");
  cmd.add_option("--machine-file", a.machine_file, "where the machine's peaks are kept")
      ->capture_default_str()
      ->type_name("PATH");
  cmd.add_option("--stream-mib", a.stream_mib, "with --machine: each STREAM array's size (default 4 x the last-level cache)")
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("MIB");
  cmd.add_option("--axis", a.axes,
                 "sweep: repeat the cases over NAME's values; --problems templates use {NAME}; `threads` and"
                 " `backend` are the run's own (repeatable; axes combine as a cartesian product)")
      ->type_name("NAME=V1,V2,...");
  cmd.add_option("--zip", a.zips, "sweep: these axes advance together instead of multiplying (repeatable)")
      ->type_name("A,B[,...]");
  cmd.add_flag("--counters", a.counters,
               "after timing, count cycles, instructions, cache misses (IPC) and software events per call"
               " over ~50 ms of calls (perf_event_open; says so where the machine exposes none)");
  cmd.add_option("--cache", a.cache,
                 "hot: the same buffers, short kernels batched; cold: flush twice the last-level cache before"
                 " every sample, one call per sample")
      ->capture_default_str()
      ->check(CLI::IsMember({"hot", "cold"}))
      ->type_name("hot|cold");
  cmd.add_option("--csv", a.csv, "also write one CSV row per case to FILE")->type_name("FILE");
  cmd.add_option("--omp-threads", a.omp_threads, "OpenMP threads while timing (default: as the environment sets them)")
      ->check(CLI::Range(1, 4096))
      ->type_name("N");
  cmd.add_option("--affinity", a.affinity,
                 "pin the run (this process, its worker and every library thread) to these CPUs, e.g. 0-3,6")
      ->type_name("CPUS");
}

/// How results are judged and recorded: `run`, `repro`, `bench` and `judge` alike.
void add_judging_options(CLI::App& cmd, case_args& a) {
  cmd.add_option("--reference", a.reference,
                 "judge against this backend (a name, or a plugin's path) run at the problem's contract,"
                 " with twice the bound, instead of opval's fp64 reference (docs/REFERENCES.md)")
      ->type_name("B|PATH");
  cmd.add_option("--policy", a.policy,
                 "tolerance policy: bound, relative-to-sim[:m=M], exact, fixed:rtol=R,atol=A")
      ->capture_default_str();
  cmd.add_option("--worst", a.worst, "number of worst elements recorded per output")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd.add_option("--jsonl", a.jsonl, "also write one JSON record per case to FILE")
      ->type_name("FILE");
}

void add_case_options(CLI::App& cmd, case_args& a) {
  add_judging_options(cmd, a);
  cmd.add_option("--backend", a.backends,
                 "backends under test, comma-separated or repeated; several are compared side by"
                 " side on the same inputs (default sim; see `opval list backends`)")
      ->delimiter(',')
      ->type_name("B[,B...]");
  cmd.add_option("--plugin", a.plugin,
                 "also test the kernel plugin (shared library, see docs/PLUGINS.md); alone when"
                 " no --backend is given")
      ->type_name("PATH");
  cmd.add_option("--seed", a.seed, "seed of the input fill")->capture_default_str()->check(seed_text());
  cmd.add_flag("--no-perturb", a.no_perturb,
               "skip the MISTRUSTED check that re-runs with a perturbed input");
  cmd.add_option("--leak-check", a.leak_check,
                 "run each kernel N more times and fail it when every run grows the live heap"
                 " (a leak; 0 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000))
      ->type_name("N");
  cmd.add_flag("--no-guard", a.no_guard, "kernel tensors in plain memory: no guard pages, no canaries");
  cmd.add_flag("--guard-before", a.guard_before,
               "put the guard page before each kernel tensor (catches writes before its start)");
  cmd.add_flag("--no-poison", a.no_poison,
               "no poisoned outputs and no second kernel run (never-written and determinism checks)");
  cmd.add_flag("--no-input-check", a.no_input_check, "do not hash inputs to catch a kernel writing them");
  cmd.add_option("--threads", a.threads,
                 "also run each kernel with each of these OpenMP thread counts; outputs must match bitwise")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096))
      ->type_name("N[,N...]");
  cmd.add_option("--known-failures", a.known_failures,
                 "cases known to fail on a backend (a documented library disagreement): shown as"
                 " FAILED (known), they do not fail the run")
      ->type_name("FILE");
  cmd.add_option("--under", a.under,
                 "rerun this command as the ASan+UBSan build (build-asan/opval) or under valgrind"
                 " memcheck (a case during which memcheck reports an error FAILS); docs/SAFETY.md")
      ->check(CLI::IsMember({"asan", "valgrind"}))
      ->type_name("asan|valgrind");
  cmd.add_option("--isolation", a.isolation,
                 "process: run each case in a worker process, so a crash or hang is a CRASH or"
                 " TIMEOUT verdict and the run goes on; none: in the opval process itself")
      ->capture_default_str()
      ->check(CLI::IsMember({"process", "none"}));
  cmd.add_option("--timeout", a.timeout,
                 "per-case time limit in seconds under process isolation, plus 10 s per GFLOP of"
                 " the case; past it the worker is killed and the case is a TIMEOUT")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

// ---------------------------------------------------------------- list

std::string joined(const std::vector<std::string>& items, std::string_view sep = " ") {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : std::string(sep)) + item;
  return s;
}

void list_attrs(const op_spec& op) {
  for (const attr_def& d : op.schema().defs()) {
    std::string detail(to_string(d.kind));
    if (d.kind == attr_kind::choice) detail += " {" + joined(d.choices, ",") + "}";
    fmt::print("    {:<14} {:<10} {} [{}]\n", d.name, format_attr_value(d.default_value), d.doc,
               detail);
  }
  std::vector<std::string> fills = op.fills();
  fmt::print("    fills: default {}\n", joined(fills));
}

void list_ops(bool verbose) {
  for (const op_spec* op : all_ops()) {
    fmt::print("{:<16} {}\n", op->name(), op->summary());
    fmt::print("    contracts: {}\n", joined(op->contracts()));
    if (verbose) list_attrs(*op);
  }
}

// Each backend is made in a worker process, as for a run: one whose construction crashes or
// hangs is listed as unavailable, and the listing goes on.
void list_backends() {
  case_worker worker;
  for (const std::string& name : backend_names()) {
    std::string version;
    try {
      version = worker.describe({name, ""}).version;
    } catch (const std::exception& e) {
      version = std::string("unavailable: ") + e.what();
    }
    fmt::print("{:<16} {}\n", name, version);
  }
}

void list_policies() {
  for (const policy_description& d : policy_descriptions()) fmt::print("{:<24} {}\n", d.syntax, d.meaning);
}

void list_suites() {
  fmt::print("{:<16} {:>6} {:>11}\n", "op", "smoke", "regression");
  for (const op_spec* op : all_ops())
    fmt::print("{:<16} {:>6} {:>11}\n", op->name(), op->suite("smoke").size(),
               op->suite("regression").size());
}

void list_contracts() {
  std::map<std::string, std::vector<std::string>> ops_of;
  for (const op_spec* op : all_ops())
    for (const std::string& c : op->contracts()) ops_of[c].emplace_back(op->name());
  for (const auto& [c, ops] : ops_of) fmt::print("{:<20} {}\n", c, joined(ops));
}

int list_command(const list_args& a) {
  if (a.what == "ops") list_ops(a.verbose);
  else if (a.what == "backends") list_backends();
  else if (a.what == "policies") list_policies();
  else if (a.what == "suites") list_suites();
  else if (a.what == "contracts") list_contracts();
  else
    throw error("unknown list '" + a.what + "' (known: ops backends policies suites contracts)");
  return exit_passed;
}

// ---------------------------------------------------------------- problems

/// The session's problem selection from run's and bench's options.
std::vector<located_problem> select_problems(const run_args& a) {
  return opval::select_problems({.tag = a.tag, .ops = a.ops, .contracts = a.contracts, .problems = a.problems});
}

// ---------------------------------------------------------------- running

run_options make_run_options(const case_args& a, case_executor& executor) {
  run_options o;
  o.pol = parse_policy(a.policy);
  o.seed = a.seed;
  o.worst_k = a.worst;
  o.perturb_check = !a.no_perturb;
  o.leak_check = a.leak_check;
  o.guard = !a.no_guard;
  o.guard_at = a.guard_before ? guard_side::before : guard_side::after;
  o.poison_check = !a.no_poison;
  o.input_check = !a.no_input_check;
  o.threads = a.threads;
  // Made now, so that an unknown name is bad input before anything runs.
  if (!a.reference.empty()) {
    o.reference.emplace();
    o.reference->ref = backend_ref_of(a.reference);
    o.reference->impl = executor.make(o.reference->ref);
  }
  return o;
}

/// The backends under test (make_session_backends); o.backend lists their names, for the
/// report header.
std::vector<session_backend> make_case_backends(const case_args& a, run_options& o, case_executor& executor,
                                               bool here = false) {
  std::vector<session_backend> out = make_session_backends(a.backends, a.plugin, executor, here);
  std::vector<std::string> made;
  for (const session_backend& sb : out) made.push_back(sb.b->name());
  o.backend = joined(made, ",");
  return out;
}

/// What `run` and `repro` do around their cases.
session_options session_of(const case_args& a, bool verbose, const std::string& resume = "") {
  return {.jsonl = a.jsonl, .resume = resume, .known_failures = a.known_failures, .plugin = a.plugin,
          .verbose = verbose, .tightness = a.tightness};
}

// Names (policy, backend) are checked before problems are selected or anything runs.
int run_command(const run_args& a) {
  if (!a.resume.empty() && !a.c.jsonl.empty() && a.c.jsonl != a.resume)
    throw error("--resume appends to its journal: give no --jsonl, or the same file");
  if (!a.resume.empty() && !std::filesystem::is_regular_file(a.resume))
    throw error("cannot resume: journal '" + a.resume + "' is not a file");
  const std::unique_ptr<case_executor> executor = make_executor(a.c.isolation, a.c.timeout);
  run_options o = make_run_options(a.c, *executor);
  std::vector<session_backend> backends = make_case_backends(a.c, o, *executor);
  return run_session(select_problems(a), o, backends, *executor, session_of(a.c, a.c.verbose, a.resume), std::cout,
                     std::cerr);
}

bench_options make_bench_options(const bench_args& a, const run_options& check) {
  if (a.cache != "hot" && a.cache != "cold") throw error("unknown --cache '" + a.cache + "' (known: hot cold)");
  bench_options b;
  b.check = check;
  b.sampling.target_ci = a.target_ci_percent / 100;
  b.sampling.budget_seconds = a.budget;
  b.sampling.min_samples = a.min_samples;
  b.sampling.min_sampling_seconds = a.min_time;
  b.sampling.warmup_seconds = a.warmup;
  b.cache = a.cache == "hot" ? cache_mode::hot : cache_mode::cold;
  b.threads = a.omp_threads;
  b.counters = a.counters;
  b.repetitions = a.repetitions;
  return b;
}

/// One case of a bench run: a problem on a backend, timed on `threads` OpenMP threads (0: as
/// they are), at a sweep point (empty outside sweeps).
struct bench_job {
  located_problem lp;
  const session_backend* cb = nullptr;
  int threads = 0;
  sweep_point point;
  std::size_t template_index = 0;
};

std::vector<std::vector<std::string>> parse_zips(const std::vector<std::string>& zips) {
  std::vector<std::vector<std::string>> groups;
  for (const std::string& z : zips) {
    groups.emplace_back();
    for (std::size_t start = 0;;) {
      const std::size_t comma = z.find(',', start);
      groups.back().push_back(z.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return groups;
}

/// The thread count of a `threads` axis value.
int threads_value(const std::string& text) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 4096)
    throw error("--axis threads: '" + text + "' is no thread count (1 to 4096)");
  return n;
}

/// `point` without the axes `item` does not use (its placeholders, threads and backend).
sweep_point projected(const sweep_point& point, const std::vector<std::string>& used) {
  sweep_point p;
  for (const auto& value : point.values)
    if (value.first == "threads" || value.first == "backend" ||
        std::find(used.begin(), used.end(), value.first) != used.end())
      p.values.push_back(value);
  return p;
}

/// The cases of a bench run. Without --axis: every selected problem on every backend. With:
/// each --problems item (or each selected problem, when none is given) at each point of the
/// axes it uses, on the point's backend or every backend, with the point's thread count.
std::vector<bench_job> bench_jobs(const bench_args& a, const std::vector<sweep_axis>& axes,
                                  const std::vector<session_backend>& backends) {
  std::vector<bench_job> jobs;
  if (axes.empty()) {
    for (const located_problem& lp : select_problems(a.r))
      for (const session_backend& cb : backends) jobs.push_back({lp, &cb, a.omp_threads, {}, 0});
    return jobs;
  }
  const std::vector<sweep_point> points = sweep_points(axes, parse_zips(a.zips));
  std::set<std::string> used_anywhere;
  for (const std::string& item : a.r.problems)
    for (const std::string& name : placeholders(item)) used_anywhere.insert(name);
  for (const sweep_axis& axis : axes)
    if (axis.name != "threads" && axis.name != "backend" && !used_anywhere.contains(axis.name))
      throw error("--axis " + axis.name + ": no --problems template uses {" + axis.name + "}");
  const auto add = [&](const located_problem& lp, const sweep_point& point, std::size_t template_index) {
    const std::string* threads = point.find("threads");
    const std::string* name = point.find("backend");
    for (const session_backend& cb : backends)
      if (!name || cb.b->name() == *name)
        jobs.push_back({lp, &cb, threads ? threads_value(*threads) : a.omp_threads, point, template_index});
  };
  std::vector<std::string> items = a.r.problems;
  if (items.empty())
    for (const located_problem& lp : select_problems(a.r)) {
      for (const sweep_point& point : points) add(lp, point, 0);
    }
  for (std::size_t t = 0; t < items.size(); ++t) {
    const std::vector<std::string> used = placeholders(items[t]);
    std::vector<sweep_point> seen;
    for (const sweep_point& full : points) {
      sweep_point point = projected(full, used);
      if (std::any_of(seen.begin(), seen.end(), [&](const sweep_point& s) { return s.values == point.values; })) continue;
      seen.push_back(point);
      if (used.empty()) {
        for (const located_problem& lp : opval::select_problems({.problems = {items[t]}})) add(lp, point, t);
      } else {
        add({parse_problem(instantiate(items[t], point)), "--problems " + items[t]}, point, t);
      }
    }
  }
  return jobs;
}

/// `opval bench --machine`: the peaks, as a table, saved for later runs.
int machine_command(const bench_args& a) {
  check_writable(a.machine_file);
  peak_options po;
  po.array_bytes = a.stream_mib << 20;
  fmt::print("opval bench --machine: measuring (the STREAM arrays are {})...\n",
             a.stream_mib ? fmt::format("{} MiB each", a.stream_mib) : std::string("4 x the last-level cache each"));
  for (const std::string& w : capture_environment().warnings) fmt::print("opval bench --machine: warning: {}\n", w);
  std::cout << std::flush;
  const machine_peaks p = measure_machine_peaks(po);
  fmt::print("{}; {}; {} threads\n", p.measured_on(), p.isa, p.threads);
  fmt::print("{:<14} {:>12} {:>12}\n", "PEAK", "1 THREAD", fmt::format("{} THREADS", p.threads));
  for (const auto& [type, figure] : p.gflops)
    fmt::print("{:<14} {:>12.4g} {:>12.4g}  {}\n", type + " FMA", figure.one, figure.all, type == "int8" ? "GOP/s" : "GFLOP/s");
  for (const memory_level& level : p.levels) {
    const std::string size = level.bytes_per_cpu ? fmt::format("{} KiB per CPU", level.bytes_per_cpu >> 10)
                                                 : fmt::format("arrays of {} MiB", p.stream_array_bytes >> 20);
    fmt::print("{:<14} {:>12.4g} {:>12.4g}  GB/s ({})\n", level.name + " copy", level.copy_gbs.one, level.copy_gbs.all, size);
    fmt::print("{:<14} {:>12.4g} {:>12.4g}  GB/s\n", level.name + " triad", level.triad_gbs.one, level.triad_gbs.all);
  }
  save_machine_peaks(p, a.machine_file);
  fmt::print("saved to {}\n", a.machine_file);
  return exit_passed;
}

// Each case is checked where --isolation says (a crash is a verdict, and is not timed), then
// timed in this process only if its check PASSED.
/// The backends a `backend` axis names replace --backend's.
case_args with_backend_axis(case_args c, const std::vector<sweep_axis>& axes) {
  for (const sweep_axis& axis : axes)
    if (axis.name == "backend") c.backends = axis.values;
  return c;
}

int bench_command(const bench_args& a) {
  if (a.machine) return machine_command(a);
  std::vector<sweep_axis> axes;
  for (const std::string& text : a.axes) axes.push_back(parse_axis(text));
  const case_args c = with_backend_axis(a.r.c, axes);
  // Before any backend or worker exists, so that their threads inherit the CPUs.
  if (!a.affinity.empty()) pin_process_to(parse_cpu_list(a.affinity));
  // The check runs in the worker; the timing here, on backends made here once the worker
  // survived making them.
  const std::unique_ptr<case_executor> executor = make_executor(c.isolation, c.timeout);
  run_options o = make_run_options(c, *executor);
  std::vector<session_backend> backends = make_case_backends(c, o, *executor, true);
  bench_options bo = make_bench_options(a, o);
  const std::vector<bench_job> jobs = bench_jobs(a, axes, backends);
  std::ofstream jsonl, csv;
  if (!c.jsonl.empty()) jsonl = open_output(c.jsonl, false);
  if (!a.csv.empty()) (csv = open_output(a.csv, false, "CSV")) << bench_csv_header();
  const std::optional<known_failures> known =
      c.known_failures.empty() ? std::nullopt : std::optional(known_failures::load(c.known_failures));
  fmt::print("opval bench: backend {}, policy {}, seed {}, {} cache, target CI +-{:g}%, budget {:g} s per case\n",
             o.backend, o.pol.to_string(), o.seed, a.cache, a.target_ci_percent, a.budget);
  environment env = capture_environment();
  for (const session_backend& cb : backends) env.libraries[cb.b->name()] = cb.b->version();
  for (const std::string& w : env.warnings) fmt::print("opval bench: warning: {}\n", w);
  std::string no_peaks;
  const std::optional<machine_peaks> peaks = load_machine_peaks(a.machine_file, env, no_peaks);
  if (peaks) {
    bo.peaks = &*peaks;
    fmt::print("opval bench: the roofline of this machine from {} (measured {})\n", a.machine_file, peaks->measured_at);
  } else {
    fmt::print("opval bench: no roofline: {}\n", no_peaks);
  }
  bench_table table(std::cout, backends.size() > 1);
  std::vector<sweep_row> rows;
  for (const bench_job& job : jobs) {
    case_result check = executor->run(job.lp, *job.cb, o);
    point_repro_at_plugin(check, c.plugin);
    if (known)
      if (const std::string* cause = known->cause(check.backend, check.descriptor)) check.known_failure = *cause;
    bo.threads = job.threads;
    bench_result r = time_case(job.lp.prob, *job.cb->b, std::move(check), bo);
    r.sweep = job.point.values;
    table.row(r);
    if (jsonl) jsonl << bench_json_line(r, &env) << std::endl;
    if (csv) csv << bench_csv_row(r) << std::flush;
    if (!axes.empty()) rows.push_back({job.point, job.template_index, std::move(r)});
  }
  const bool ok = table.finish();
  if (!rows.empty()) print_scaling_table(std::cout, axes, rows);
  return ok ? exit_passed : exit_failed;
}

int repro_command(const repro_args& a) {
  const std::unique_ptr<case_executor> executor = make_executor(a.c.isolation, a.c.timeout);
  run_options o = make_run_options(a.c, *executor);
  std::vector<session_backend> backends = make_case_backends(a.c, o, *executor);
  return run_session({{parse_problem(a.descriptor), "<command line>"}}, o, backends, *executor, session_of(a.c, true),
                     std::cout, std::cerr);
}

int judge_command(const judge_args& a) {
  const std::unique_ptr<case_executor> executor = make_executor("none", 0);  // a judge runs no kernel
  run_options o = make_run_options(a.c, *executor);
  o.backend = "judge";
  const case_result r = judge_files(parse_problem(a.descriptor), a.inputs, a.outputs, o);
  std::vector<std::unique_ptr<reporter>> reporters;
  reporters.push_back(make_console_reporter(std::cout, true));
  std::ofstream jsonl;
  if (!a.c.jsonl.empty()) {
    jsonl = open_output(a.c.jsonl, false);
    reporters.push_back(make_jsonl_reporter(jsonl));
  }
  run_summary summary;
  summary.add(r);
  for (auto& rep : reporters) rep->on_start(o), rep->on_result(r), rep->on_finish(summary);
  if (!any_case_ran(summary)) std::cerr << "opval: nothing was judged (" << r.v.reason << ")\n";
  return run_exit_code(summary);
}

// ---------------------------------------------------------------- errors

/// The one line printed for bad input: the message's first line, plus the offending
/// token when the message itself does not show it.
std::string one_line(const std::exception& e) {
  std::string msg = e.what();
  msg = msg.substr(0, msg.find('\n'));
  if (const auto* pe = dynamic_cast<const parse_error*>(&e);
      pe && !pe->token().empty() && msg.find(pe->token()) == std::string::npos &&
      msg.find("column") == std::string::npos)
    msg += fmt::format(" (at '{}', column {})", pe->token(), pe->column());
  return msg;
}

/// Bad input can be binary or huge (a --problems file that is neither text nor short): the
/// line shows control bytes as \xNN and keeps the head and tail of a message over 1000 bytes.
std::string printable_line(std::string_view message) {
  constexpr std::size_t keep = 400;
  std::string clipped(message);
  if (message.size() > 2 * keep + 200)
    clipped = fmt::format("{} [... {} bytes ...] {}", message.substr(0, keep),
                          message.size() - 2 * keep, message.substr(message.size() - keep));
  std::string out;
  for (unsigned char c : clipped) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

int bad_input(const std::string& message) {
  std::cerr << "opval: error: " << printable_line(message) << std::endl;
  return exit_bad_input;
}

// ---------------------------------------------------------------- --under

#if defined(__SANITIZE_ADDRESS__)
constexpr bool built_with_asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool built_with_asan = true;
#else
constexpr bool built_with_asan = false;
#endif
#else
constexpr bool built_with_asan = false;
#endif

/// `--under asan|valgrind`: replaces this process by the same command (without --under) run
/// as the ASan+UBSan build of opval (build-asan/opval beside this binary's build directory)
/// or under valgrind memcheck, which follows the worker processes too. Returns only when
/// this binary already is the ASan build; throws opval::error when the checker is missing.
void rerun_under(const std::string& checker, int argc, char** argv) {
  if (checker == "asan" && built_with_asan) return;
  if (checker == "valgrind" && built_with_asan)
    throw error("--under valgrind: this opval is an ASan build, which valgrind cannot run; use the normal build's opval");
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--under") ++i;
    else if (!arg.starts_with("--under=")) args.push_back(i == 0 ? self.string() : arg);
  }
  const std::filesystem::path source_dir = self.parent_path().parent_path();
  if (checker == "valgrind") {
    // somalloc=NONE: valgrind also replaces the malloc that opval's heap hooks define in the
    // executable, so every block is valgrind's (docs/SAFETY.md, memory accounting).
    args.insert(args.begin(), {"valgrind", "--quiet", "--trace-children=yes", "--error-exitcode=99",
                               "--leak-check=full", "--errors-for-leak-kinds=definite",
                               "--soname-synonyms=somalloc=NONE"});
    // Third-party reports (the dynamic loader's, docs/SAFETY.md), as scripts/memcheck does.
    if (const auto supp = source_dir / "tests/sanitizers/valgrind.supp"; std::filesystem::exists(supp))
      args.insert(args.begin() + 1, "--suppressions=" + supp.string());
  }
  const std::filesystem::path asan_build = source_dir / "build-asan";
  if (checker == "asan") {
    args.front() = (asan_build / "opval").string();
    if (!std::filesystem::exists(args.front()))
      throw error("--under asan: no ASan build of opval at '" + args.front() +
                  "': build it with `cmake --preset asan-ubsan && cmake --build --preset asan-ubsan --target opval`");
    // Third-party leaks (docs/SAFETY.md) unless the user set LeakSanitizer's options.
    const auto suppressions = source_dir / "tests/sanitizers/lsan.supp";
    if (std::filesystem::exists(suppressions))
      ::setenv("LSAN_OPTIONS", ("suppressions=" + suppressions.string()).c_str(), 0);
  }
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  std::cout.flush();
  ::execvp(c_args[0], c_args.data());
  throw error("--under " + checker + ": cannot run '" + args.front() + "': " + std::strerror(errno) +
              (checker == "valgrind" ? " (install valgrind)" : ""));
}

// ---------------------------------------------------------------- main

constexpr const char* footer_text =
    "Exit codes: 0 all cases that ran passed (and at least one ran); 1 a case FAILED, was\n"
    "MISTRUSTED, crashed or timed out, or none ran; 2 bad input (one line on stderr).\n"
    "Full reference: docs/CLI.md";

constexpr const char* bench_closing_text =
    "Output: a table (op, descriptor, contract, state, median, its CI, GFLOP/s, GB/s, CV, samples, and\n"
    "the share of this machine's roof reached, once `opval bench --machine` has measured it);\n"
    "a case whose check did not pass is not timed, and its reason and repro follow its row.\n"
    "The last line is `N timed, N failed, N skipped`. Exit 1 when a check failed or none was timed.\n";

constexpr const char* closing_text =
    "Output: a table (op, descriptor, contract, state, max ulps, max err/bound, time); every case\n"
    "that did not pass is explained under its row with the worst elements and its repro command.\n"
    "With several backends, rows name their backend and a side-by-side table follows.\n"
    "The last line is `N passed, N failed, N skipped` (failed counts MISTRUSTED, CRASH and\n"
    "TIMEOUT, skipped counts UNIMPLEMENTED).\n";

int opval_main(int argc, char** argv) {
  CLI::App app{"opval: validates neural-network operator implementations against an fp64\n"
               "reference, with tolerances derived from error analysis.",
               "opval"};
  app.set_version_flag("--version", fmt::format("opval {} ({})", build::version, build::git_sha));
  app.require_subcommand(1);

  list_args la;
  CLI::App* list = app.add_subcommand(
      "list", "list ops, backends, policies, suites or contracts");
  list->add_option("what", la.what,
                   "ops (summary, contracts; -v adds attributes and fills) | backends | policies |"
                   " suites (case counts per tag) | contracts (the ops supporting each)")
      ->required();
  list->add_flag("-v,--verbose", la.verbose, "ops: also list attributes, defaults and fills");

  run_args ra;
  CLI::App* run = app.add_subcommand(
      "run", "run the suite --tag of every op (or --problems) and judge each case");
  add_selection_options(*run, ra);
  add_case_options(*run, ra.c);
  run->add_flag("-v,--verbose", ra.c.verbose, "explain every case, not only those that did not pass");
  run->add_option("--resume", ra.resume,
                  "finish the run whose --jsonl journal is JOURNAL (same selection and options): cases"
                  " it records are not rerun, the others are appended; the report covers the whole run")
      ->type_name("JOURNAL");
  run->add_flag("--tightness", ra.c.tightness,
                "end with a table of observed error / bound per op and contract");

  repro_args pa;
  CLI::App* repro = app.add_subcommand(
      "repro", "rerun one case verbosely (the command printed under every failure)");
  repro->add_option("descriptor", pa.descriptor, "the problem, e.g. 'matmul m=4 n=5 k=3 dt=bf16'")
      ->required();
  add_case_options(*repro, pa.c);

  judge_args ja;
  CLI::App* judge = app.add_subcommand(
      "judge", "judge arrays you already have: outputs saved from a model or another tool, for their inputs"
               " (.npy files named after the operands, .npz archives keyed by them, ONNX TensorProto .pb files;"
               " docs/JUDGE.md)");
  judge->add_option("descriptor", ja.descriptor, "the problem the arrays are of, e.g. 'cast shape=1024 dt=f32:f32:bf16'")
      ->required();
  judge->add_option("--inputs", ja.inputs, "the problem's inputs (repeatable)")->required()->type_name("FILE");
  judge->add_option("--outputs", ja.outputs, "the outputs to judge (repeatable)")->required()->type_name("FILE");
  add_judging_options(*judge, ja.c);

  bench_args ba;
  CLI::App* bench = app.add_subcommand(
      "bench", "check, then time, the suite --tag of every op (or --problems): latency with its confidence"
               " interval, GFLOP/s, GB/s");
  add_selection_options(*bench, ba.r);
  add_case_options(*bench, ba.r.c);
  add_bench_options(*bench, ba);
  compare_args ca;
  CLI::App* compare = bench->add_subcommand(
      "compare", "compare two `opval bench --jsonl` files: per case the ratio of medians with its CI, a"
                 " Mann-Whitney test, and a verdict; exit 1 when a case is slower");
  compare->add_option("base", ca.base, "the baseline JSONL")->required()->type_name("BASE.jsonl");
  compare->add_option("new", ca.next, "the JSONL to judge against it")->required()->type_name("NEW.jsonl");
  compare->add_option("--threshold", ca.threshold_percent, "a change smaller than PCT percent is `same`")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0))
      ->type_name("PCT");
  compare->add_option("--alpha", ca.alpha, "significance level of the Mann-Whitney test")
      ->capture_default_str()
      ->check(CLI::Range(1e-9, 0.5))
      ->type_name("A");

  app.footer(footer_text);
  list->footer(footer_text);
  bench->footer(std::string(bench_closing_text) + footer_text);
  run->footer(std::string(closing_text) + footer_text);
  repro->footer(std::string(closing_text) + footer_text);
  judge->footer(std::string(closing_text) + footer_text);

  // CLI11 would report a mistyped command as a missing one; name it instead.
  const std::set<std::string> commands = {"list", "run", "repro", "judge", "bench"};
  if (argc > 1 && argv[1][0] != '-' && !commands.contains(argv[1]))
    return bad_input(fmt::format("unknown command '{}' (known: list run repro judge bench)", argv[1]));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::CallForVersion*>(&e)) {
      std::cout << e.what() << '\n';
      return exit_passed;
    }
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return bad_input(one_line(e));
  }
  if (*list) return list_command(la);
  if (const std::string& under = *run ? ra.c.under : *bench ? ba.r.c.under : pa.c.under; !under.empty())
    rerun_under(under, argc, argv);
  if (*compare) {
    const compare_options co{.threshold = ca.threshold_percent / 100, .alpha = ca.alpha};
    return print_comparison(std::cout, compare_bench_files(ca.base, ca.next, co), co) ? exit_passed : exit_failed;
  }
  if (*bench) return bench_command(ba);
  if (*run) return run_command(ra);
  if (*judge) return judge_command(ja);
  return repro_command(pa);
}

}  // namespace

int main(int argc, char** argv) {
  // The hidden worker mode of process isolation (opval/isolation.hpp), before any parsing.
  if (argc > 1 && std::string_view(argv[1]) == opval::worker_argument) return opval::worker_main(argc, argv);
  try {
    return opval_main(argc, argv);
  } catch (const std::exception& e) {
    return bad_input(one_line(e));
  } catch (...) {
    return bad_input("unexpected error");
  }
}
