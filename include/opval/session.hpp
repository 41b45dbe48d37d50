#pragma once
// A session: the cases a run selects, runs and reports, in the library so that `opval run`,
// `opval bench`, Python's opval.run and opval.check select, run and report alike: the problem
// selection (docs/CLI.md, "Batch files and shape sets"), the run of a session's cases with
// its journal, resume and known failures, and the exit rule.
#include <cstdint>
#include <fstream>
#include <iosfwd>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <memory>

#include "opval/backend.hpp"
#include "opval/problem.hpp"
#include "opval/reporter.hpp"
#include "opval/runner.hpp"

namespace opval {

// ---------------------------------------------------------------- executors
// Where a session's cases run: in a worker process (the default: a crash or hang is a verdict,
// and backends and plugins are made there first), or in the calling process.

/// The per-case time limit of a worker process, seconds (plus 10 s per GFLOP of the case).
inline constexpr double default_case_timeout_seconds = 60;

/// A backend under test, and how a worker process makes the same one. Shared: a caller that
/// keeps its backends (the Python layer) hands them to a session without giving them up.
struct session_backend {
  std::shared_ptr<backend> b;
  backend_ref ref;
};

/// Runs cases, and makes the backends they run on.
class case_executor {
 public:
  virtual ~case_executor() = default;
  /// The backend `ref`. In a worker: made there first (a plugin's constructors and metadata
  /// functions never run in this process before a worker survived them), and known here by
  /// its identity alone unless `here` (timing needs the backend in this process too).
  virtual std::unique_ptr<backend> make(const backend_ref& ref, bool here = false) = 0;
  virtual case_result run(const located_problem& lp, const session_backend& sb, const run_options& o) = 0;
  /// sb's supports(p), asked where its cases run (a worker process: a crash or hang there is an
  /// opval::error naming the backend and the problem). This process by default.
  virtual support supports(const session_backend& sb, const problem& p);
  /// judge_files (opval/judge.hpp) of arrays in files, where the cases run: in a worker the
  /// files are read and the alternative reference runs there, and a crash or hang is a
  /// verdict. This process by default.
  virtual case_result judge(const problem& p, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs, const run_options& o);
};

/// `--isolation`: "process" (a worker process with the per-case time limit from
/// `timeout_seconds`, core/isolation.hpp) or "none" (this process, unprotected); another name
/// is an opval::error.
std::unique_ptr<case_executor> make_executor(const std::string& isolation, double timeout_seconds);

/// How the CLI names a backend: a plugin when the text is a path (ends in .so or holds a '/'),
/// else a registered backend.
backend_ref backend_ref_of(const std::string& text);

/// The backends under test, each once, in the order given: `names` (sim when none is given and
/// no plugin), then `plugin`; all made through `executor` before anything runs, so an unknown
/// name or a plugin that fails to load is bad input.
std::vector<session_backend> make_session_backends(const std::vector<std::string>& names, const std::string& plugin,
                                                   case_executor& executor, bool here = false);

/// The backends' names, comma-separated (run_options::backend, for report headers).
std::string names_of(const std::vector<session_backend>& backends);

// ---------------------------------------------------------------- selection

/// The suite tags every op's suite answers to.
const std::vector<std::string>& suite_tags();

/// Which problems a session runs: the items of `problems` when given (descriptors, batch
/// files, or named shape sets of tests/problems/ such as `resnet50_conv`), else the suite
/// `tag` of `ops` (every op's when empty); of those, only the problems of `ops` and of
/// `contracts` (dt= strings; `bf16` selects bf16:f32:bf16), when given.
struct problem_selection {
  std::string tag = "smoke";
  int suite_budget = 200;  ///< the generated suite's cases per op and contract (generation_options)
  std::vector<std::string> ops;
  std::vector<std::string> contracts;
  std::vector<std::string> problems;
  std::string inline_source = "<command line>";  ///< the source of a problem given as a descriptor
};

/// The suite tag whose problems are generated for the kernel under test (docs/COVERAGE.md).
inline constexpr std::string_view generated_tag = "generated";

/// The selected problems, in order, with where each came from. Throws opval::error naming the
/// problem: an unknown op or tag, a malformed descriptor or contract, an unreadable, empty or
/// directory problem file, or filters that leave nothing.
std::vector<located_problem> select_problems(const problem_selection& s);

// ---------------------------------------------------------------- generated suites and coverage

/// How a generated suite is made (docs/COVERAGE.md).
struct generation_options {
  std::uint64_t seed = 1;  ///< the same seed, the same suite
  /// Cases per op and contract: the base and every value alone always run; pairs of values are
  /// combined until every pair is covered or this many cases are made.
  int budget = 200;
  std::vector<std::string> contracts;  ///< only these contracts (dt= text; `bf16` = bf16:f32:bf16); empty: all
};

/// One value of one feature on one backend: where it ran alone, in how many cases, and where not.
struct value_coverage {
  std::string feature, value;
  std::vector<std::string> alone;  ///< contracts where it ran with every other feature at its base
  int cases = 0;                   ///< generated cases that hold it
  /// Contracts where it did not run alone, with why: the backend's refusal, or the problem it
  /// makes there is not a valid one (a type the value does not apply to).
  std::vector<std::pair<std::string, std::string>> refused, inapplicable;
};

/// One contract of an op on one backend: whether its base problem runs, and its pairs of values.
struct contract_coverage {
  std::string contract;
  std::string refused;  ///< the backend's reason for refusing the base problem ("": it runs)
  int cases = 0;
  int pairs = 0;              ///< pairs of values that each ran alone and set no key differently
  int pairs_covered = 0;      ///< of those, combined in some case
  int pairs_refused = 0;      ///< refused by the backend even alone together
  int pairs_inapplicable = 0; ///< together no valid problem
  int pairs_over_budget = 0;  ///< not reached within the budget
};

/// What a generated suite covers of one op on one backend.
struct op_coverage {
  std::string op, backend;
  std::uint64_t seed = 1;
  int budget = 0;
  std::vector<contract_coverage> contracts;
  std::vector<value_coverage> values;
  /// Values that ran alone somewhere, and all values.
  int values_covered() const;
};

/// A generated suite: its problems and what they cover.
struct generated_suite {
  std::vector<located_problem> problems;
  op_coverage coverage;
};

/// The generated suites of the selection's ops (every op's when none is named) for each backend,
/// their supports() asked through `executor` (in a worker for a plugin: its code never runs here);
/// the problems merged in order, each once; and one op_coverage per op and backend. Throws
/// opval::error for an unknown op, or when a backend crashes or hangs in supports().
struct session_suite {
  std::vector<located_problem> problems;
  std::vector<op_coverage> coverage;
};
session_suite generate_session_suite(const problem_selection& s, const std::vector<session_backend>& backends,
                                     case_executor& executor, std::uint64_t seed);

/// The coverage as the console shows it: per op and backend a line of totals, then the values and
/// pairs not covered, with why (all values with `verbose`), wrapped to `width`.
void print_coverage(const std::vector<op_coverage>& coverage, bool verbose, int width, std::ostream& out);
/// One op_coverage as a JSON object (one line): the JSON Lines record `{"coverage": ...}`.
std::string coverage_json(const op_coverage& c);

/// Whether a `problems` item names a batch file or shape set rather than being a descriptor:
/// a file exists there, or it is one word that is a path, has an extension or is no op name.
bool names_problem_file(const std::string& item);

/// Where progress goes while a run works (stderr): nowhere, a line redrawn in place on a
/// terminal, or a line every 30 s in a log.
enum class progress_mode { off, terminal, log };

/// The console the output goes to: its width and colour (of stdout), and the progress (stderr).
/// The CLI asks the terminal (report/terminal.hpp); other callers keep these defaults.
struct console_style {
  int width = 120;
  bool colour = false;
  progress_mode progress = progress_mode::off;
};

/// What a run session does around its cases (opval run, opval repro).
struct session_options {
  std::string jsonl;           ///< the journal: one JSON record per case, flushed as it ends
  std::string resume;          ///< a journal to finish: its cases are not run again, the rest appended
  std::string known_failures;  ///< a known-failures file (core/known_failures.hpp)
  bool verbose = false;        ///< explain every case, not only those that did not pass
  bool tightness = false;      ///< end with the error/bound table per op and contract
  bool quiet = false;          ///< print only the short summary of failures and the totals
  std::string junit;           ///< also write JUnit XML to this file at the end
  /// `--shard`: "" (the whole run), "I/N", or "auto" (from the engine's environment): run only
  /// this shard's cases, each record saying its place in the whole run (docs/FLEET.md).
  std::string shard;
  console_style console;
  /// The command that started the run, as a shell line ("opval run --tag regression ..."):
  /// an interrupted run says to resume with it (empty: the message names no command).
  std::string command;
  /// `--history`: the SQLite run history to record the run in (docs/FLEET.md, "History"); a
  /// shard does not record (`opval merge --history` records the whole run). With it, the run's
  /// `commit` (empty: history.hpp's detect_commit), `tier` and `label`.
  std::string history, commit, tier, label;
  /// `--budget`: choose the cases that fit this many seconds, most important first (history's
  /// failures and flaky cases, the ops and backends `changes` touches, coverage; docs/FLEET.md);
  /// 0: every case, in order. The history, when given, is read for recorded costs and verdicts.
  double budget_seconds = 0;
  std::string changes;  ///< `--changes`: a git revision or a file of changed paths
  int seeds = 1;        ///< `--seeds`: each case at the run's seed and the next seeds - 1
  reporter* also = nullptr;    ///< one more reporter, the caller's (Python collects the results with one)
  /// What a generated suite covers: printed before the closing line (not when quiet) and recorded
  /// first in the journal, one `{"coverage": ...}` line per op and backend.
  std::vector<op_coverage> coverage;
};

/// Runs every problem on every backend (a problem's backends one after the other, on the same
/// inputs) through the reporters on `out`, notes on `err`; returns the exit code
/// (run_exit_code). With a journal to resume, the cases it records are replayed into the
/// reporters, so they show the whole run, and only the others run. SIGINT or SIGTERM ends the
/// run between two cases (a case its worker died in is not recorded), says on `err` how many
/// ran and how to resume, and returns 128 + the signal's number.
int run_session(const std::vector<located_problem>& problems, const run_options& o,
                const std::vector<session_backend>& backends, case_executor& executor, const session_options& s,
                std::ostream& out, std::ostream& err);

/// `opval merge`: the journals of a sharded run's shards (`--shard I/N --jsonl`, any order)
/// reported as the whole run is (console, `s.jsonl` with the records as the unsharded run writes
/// them, `s.junit`); returns the run's exit code. Throws opval::error naming a missing,
/// duplicated or unfinished shard, or journals of different runs (docs/FLEET.md).
int merge_session(const std::vector<std::string>& journals, const session_options& s, std::ostream& out,
                  std::ostream& err);

/// The exit rule of a run: 0 when every case that ran passed (listed known failures aside)
/// and at least one ran; 1 otherwise (2, bad input, is the callers').
int run_exit_code(const run_summary& s);
/// Whether any case of the run ran (was neither skipped nor unimplemented).
bool any_case_ran(const run_summary& s);

// ---------------------------------------------------------------- the session plan

/// Where `opval bench --machine` keeps the machine's peaks: $OPVAL_MACHINE_FILE, else
/// $XDG_CACHE_HOME/opval/machine.json, else ~/.cache/opval/machine.json.
std::string default_machine_file();

/// How `opval bench` times (docs/BENCHMARKING.md): the fields of its options.
struct bench_settings {
  double target_ci_percent = 1;
  double budget = 5;
  std::uint64_t min_samples = 30;
  int repetitions = 1;
  bool counters = false;
  double min_time = 0.5;
  double warmup = 0.05;
  std::string cache = "hot";
  std::string csv;
  int omp_threads = 0;    ///< OpenMP threads while timing (0: as they are)
  std::string affinity;   ///< a cpulist the whole run is pinned to
  bool machine = false;   ///< measure the machine's peaks instead of benchmarking
  std::string machine_file = default_machine_file();
  std::uint64_t stream_mib = 0;    ///< --machine's STREAM arrays (0: 4 x the last-level cache)
  std::vector<std::string> axes;  ///< --axis NAME=V1,V2,...: a sweep
  std::vector<std::string> zips;  ///< --zip A,B: axes that advance together
};

/// Everything a session is told, as the user says it: one field per option of
/// session_option_table() (the CLI's options, the Python layer's keywords, the worker
/// protocol's fields). The CLI parses its arguments into one; the library does the rest.
struct session_plan {
  /// Its tag empty: smoke, unless a --tier names another suite (resolve_tier).
  problem_selection selection{.tag = ""};
  std::vector<std::string> backends;  ///< empty: sim, unless a plugin is given
  std::string plugin;                 ///< a kernel plugin: one more backend under test
  std::string reference;              ///< judge against this backend or plugin (at the contract)
  /// The case options, sent with every case to the worker. Its `backend` and `reference` are
  /// the session's to fill (make_run_options).
  run_options run;
  std::string jsonl;
  std::string resume;          ///< a journal to finish: its recorded cases are not run again
  std::string shard;           ///< session_options::shard
  std::string known_failures;  ///< a known-failures file (core/known_failures.hpp)
  std::string under;           ///< asan | valgrind: the CLI reruns itself under that checker
  std::string command;         ///< the command line, for the resume hint (session_options::command)
  std::string isolation = "process";
  double timeout = default_case_timeout_seconds;
  bool verbose = false;
  bool tightness = false;
  bool quiet = false;
  std::string junit;
  std::string history, commit, tier, label;  ///< session_options::history and the run's identity
  std::string budget;   ///< --budget: a duration ("10m"); empty: the tier's, else none
  std::string changes;  ///< session_options::changes
  int seeds = 0;        ///< --seeds; 0: the tier's, else 1
  console_style console;  ///< the CLI's terminal
  std::vector<std::string> judge_inputs, judge_outputs;  ///< `opval judge`'s array files
  bench_settings bench;
};

/// The commands an option belongs to (a bit set).
enum option_command : unsigned { for_run = 1, for_repro = 2, for_bench = 4, for_judge = 8, for_coverage = 16, for_merge = 32 };
/// The Python functions taking an option as a keyword (a bit set).
enum python_function : unsigned { in_opval_run = 1, in_opval_check = 2, in_opval_judge = 4 };

/// What an option is about: its group in the help, and whether it travels with each case.
enum class option_stage {
  selection,  ///< which problems (problem_selection)
  backends,   ///< what runs and what it is judged against
  per_case,   ///< a field of run_options: sent to the worker with every case
  session,    ///< around the cases: journal, isolation, output
  bench,      ///< how `opval bench` times
};

template <class T>
using plan_field = T& (*)(session_plan&);

/// Where an option's value lives in a session_plan, by its type.
using option_field =
    std::variant<plan_field<bool>, plan_field<int>, plan_field<std::uint64_t>, plan_field<double>,
                 plan_field<std::string>, plan_field<std::vector<std::string>>, plan_field<std::vector<int>>,
                 plan_field<policy>, plan_field<guard_side>>;

/// One option of a session, the one description of it: the CLI registers it from this (its
/// help, value name, range and choices), the worker protocol sends the per_case ones under
/// their keyword, the Python layer takes it under `keyword` (tests check the signatures), and
/// docs/CLI.md's tables list it (tests check that too).
struct option_def {
  std::string_view flag;        ///< "--seed"; "-v,--verbose" with a short form
  std::string_view keyword;     ///< its name in Python and in the worker protocol ("perturb")
  std::string_view value_name;  ///< "N", "FILE"; empty for a flag
  std::string_view help;
  option_stage stage;
  unsigned commands;            ///< option_command bits
  unsigned python;              ///< python_function bits
  option_field field;
  bool negated = false;         ///< a flag that turns its field off (--no-perturb: perturb=False)
  double min = -std::numeric_limits<double>::infinity();  ///< a number's range
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;   ///< the value must exceed `min` (a time limit: any positive one)
  std::string_view choices;     ///< the words a text may be, space-separated; empty: any
  char delimiter = 0;           ///< a list's separator within one argument (',')
  bool show_default = false;    ///< the help shows the default value
  bool required = false;
};

/// Every option of every session command, in the order the help lists them.
const std::vector<option_def>& session_option_table();

/// Why `text` is no value of option `d` ("" when it is one): not a number of the field's type
/// (a list's element, for a list) or outside its range, or a word not among its choices.
std::string option_value_error(const option_def& d, std::string_view text);
/// The range of a numeric option as the help says it ("an integer from 0 to 1000"); "" for none.
std::string option_value_rule(const option_def& d);

/// The case options of `o` that differ from their defaults, seed and policy aside (repros
/// place those themselves), in the table's order: as CLI arguments (" --no-perturb --threads
/// 2,1") or, with `python`, as keywords (", perturb=False, threads=[2, 1]").
std::string changed_case_options(const run_options& o, bool python);

/// The run options of a plan: its case options, its policy, and the alternative reference
/// made through `executor` (an unknown name is bad input before anything runs).
run_options make_run_options(const session_plan& plan, case_executor& executor);

/// `opval run`: the plan's selection on its backends; the exit code (run_exit_code). Throws
/// opval::error for bad input (an unknown name, an unreadable file, a journal that cannot be
/// resumed) before any case runs.
int run_plan(const session_plan& plan, std::ostream& out, std::ostream& err);
/// `opval repro`: one descriptor, explained whatever its verdict.
int repro_plan(const session_plan& plan, const std::string& descriptor, std::ostream& out, std::ostream& err);
/// `opval judge`: the plan's judge_inputs and judge_outputs files as the arrays of `descriptor`.
int judge_plan(const session_plan& plan, const std::string& descriptor, std::ostream& out, std::ostream& err);
/// `opval merge JOURNAL...` with the plan's report options (--jsonl, --junit, -q, -v,
/// --tightness): merge_session after checking the output files differ.
int merge_plan(const session_plan& plan, const std::vector<std::string>& journals, std::ostream& out, std::ostream& err);
/// `opval bench`: the plan's cases checked, then timed, with its sweeps expanded, through the
/// bench reporters (console, JSONL, CSV); with `bench.machine`, measures and saves the peaks.
int bench_plan(const session_plan& plan, std::ostream& out);
/// `opval coverage`: the generated suite of the plan's selection for its backends, made from
/// their supports() answers (no kernel runs), printed as the coverage report (every value with
/// `verbose`), and written to the plan's --jsonl as `{"coverage": ...}` lines. Returns 0, or 1
/// when the backends run no problem of the selection.
int coverage_plan(const session_plan& plan, std::ostream& out, std::ostream& err);
/// Throws opval::error when two of the files a command writes (--jsonl, --csv, --junit) are one
/// file: the formats would interleave into neither.
void check_output_files_differ(const session_plan& plan);

/// `opval list WHAT` (ops, backends, policies, suites, contracts); an unknown WHAT is an
/// opval::error naming the known ones.
void print_catalog(std::string_view what, bool verbose, std::ostream& out);

}  // namespace opval
