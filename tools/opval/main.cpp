// The opval command line. Thin on purpose: it parses arguments into a session plan (the
// options come from the library's session_option_table) and calls the library's session
// commands (opval/session.hpp). Every user error becomes one line on stderr and exit code 2;
// a case that fails or throws is a verdict and never stops the run. The help text here and
// docs/CLI.md describe the same commands (tests/cpp/test_cli.cpp checks that every option
// appears in both).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>
#include <utility>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/bench_compare.hpp"
#include "bench/bench_report.hpp"
#include "history/history_report.hpp"
#include "opval/build_info.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"
#include "python_commands.hpp"
#include "core/isolation.hpp"
#include "core/shell_quote.hpp"
#include "opval/policy.hpp"
#include "opval/session.hpp"
#include "report/html_report.hpp"
#include "report/terminal.hpp"

namespace {

using namespace opval;

constexpr int exit_passed = 0;
constexpr int exit_failed = 1;
constexpr int exit_bad_input = 2;

// ---------------------------------------------------------------- options

/// Registers one option of the table on `cmd`, bound to its field in `plan`.
CLI::Option* add_option(CLI::App& cmd, session_plan& plan, const option_def& d) {
  const std::string flag(d.flag), help(d.help);
  return std::visit(
      [&]<class T>(plan_field<T> field) -> CLI::Option* {
        T& value = field(plan);
        CLI::Option* o = nullptr;
        if constexpr (std::is_same_v<T, bool>) {
          o = d.negated ? cmd.add_flag_callback(flag, [&value] { value = false; }, help) : cmd.add_flag(flag, value, help);
        } else if constexpr (std::is_same_v<T, guard_side>) {
          o = cmd.add_flag_callback(flag, [&value] { value = guard_side::before; }, help);
        } else if constexpr (std::is_same_v<T, policy>) {
          o = cmd.add_option_function<std::string>(flag, [&value](const std::string& t) { value = parse_policy(t); }, help);
          // The default policy by its name, as the table documents it (to_string spells out its parameters).
          if (d.show_default) o->default_str(value.to_string() == policy{}.to_string() ? "bound" : value.to_string());
        } else {
          o = cmd.add_option(flag, value, help);
          if (d.show_default) o->capture_default_str();
        }
        return o;
      },
      d.field);
}

void add_options(CLI::App& cmd, session_plan& plan, option_command command) {
  for (const option_def& d : session_option_table()) {
    if (!(d.commands & command)) continue;
    CLI::Option* o = add_option(cmd, plan, d);
    if (!d.value_name.empty()) o->type_name(std::string(d.value_name));
    if (d.delimiter) o->delimiter(d.delimiter);
    // The library's rule (number, range, choices); CLI11's own would wrap a negative seed.
    o->check(CLI::Validator([&d](std::string& text) { return option_value_error(d, text); }, option_value_rule(d)));
    if (d.required) o->required();
  }
}

int bad_input(const std::string& line) {
  std::cerr << "opval: error: " << line << std::endl;
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

/// Edits (insertions, deletions, substitutions) from a to b: how far a typo is from an option.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      diagonal = std::exchange(row[j], std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])}));
  }
  return row[b.size()];
}

/// The first `--word` of the command line that `command` has no option for, with its closest
/// option when one is near (a prefix, or two edits): "unknown option '--problem' for opval
/// run (did you mean --problems?)". Empty when every --word is an option.
std::string misspelt_option(const CLI::App& command, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::Option* o : command.get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    const std::string word(arg.substr(0, arg.find('=')));
    if (std::find(names.begin(), names.end(), word) != names.end()) continue;
    std::string best;
    std::size_t best_distance = 3;
    for (const std::string& n : names)
      if (const std::size_t d = n.starts_with(word) ? 1 : edit_distance(word, n); d < best_distance)
        best = n, best_distance = d;
    return fmt::format("unknown option '{}' for opval {}{}", word, command.get_name(),
                       best.empty() ? "" : " (did you mean " + best + "?)");
  }
  return {};
}

/// An explicit --timeout is kept by stopping the case's worker; with --isolation none there is
/// no worker, and a silent no-op would let a hang run forever: bad input.
void check_timeout_applies(const CLI::App& command, const session_plan& plan) {
  const CLI::Option* timeout = command.get_option_no_throw("--timeout");
  if (timeout && timeout->count() > 0 && plan.isolation == "none")
    throw error("--timeout cannot be kept with --isolation none: the case runs inside opval, with no worker to stop; "
                "drop one of them");
}

/// The command line as a shell line, each word quoted where it must be: what an interrupted
/// run says to resume with.
std::string command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + opval::detail::shell_word(argv[i]);
  return line;
}

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
    // GCC 12's LeakSanitizer misreads the dynamic TLS of dlopen'd backend modules (docs/SAFETY.md).
    ::setenv("ASAN_OPTIONS", "intercept_tls_get_addr=0", 0);
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

  std::string what;
  bool list_verbose = false;
  CLI::App* list = app.add_subcommand("list", "list ops, backends, policies, suites or contracts");
  list->add_option("what", what,
                   "ops (summary, contracts; -v adds attributes and fills) | backends | policies |"
                   " suites (case counts per tag) | contracts (the ops supporting each)")
      ->required();
  list->add_flag("-v,--verbose", list_verbose, "ops: also list attributes, defaults and fills");

  session_plan run_plan_, repro_plan_, judge_plan_, bench_plan_;
  CLI::App* run = app.add_subcommand("run", "run the suite --tag of every op (or --problems) and judge each case");
  add_options(*run, run_plan_, for_run);

  std::string descriptor;
  CLI::App* repro = app.add_subcommand("repro", "rerun one case verbosely (the command printed under every failure)");
  repro->add_option("descriptor", descriptor, "the problem, e.g. 'matmul m=4 n=5 k=3 dt=bf16'")->required();
  add_options(*repro, repro_plan_, for_repro);

  session_plan merge_plan_;
  std::vector<std::string> journals;
  CLI::App* merge = app.add_subcommand(
      "merge", "join the --jsonl journals of a sharded run's shards (opval run --shard I/N) into the whole run's "
               "records and report, as the unsharded run would (docs/FLEET.md)");
  merge->add_option("journals", journals, "the shards' journals, in any order")->required()->type_name("JOURNAL");
  add_options(*merge, merge_plan_, for_merge);

  std::vector<std::string> report_bench;
  std::string report_output, report_title = "opval report";
  CLI::App* report = app.add_subcommand(
      "report", "one self-contained HTML file to share, from run journals and bench records: the summary, every "
                "failure with its worst elements and heatmap, histograms, the bias test, scaling and the roofline "
                "(docs/REPORTS.md)");
  report->add_option("journals", journals, "the runs' --jsonl journals (opval run, opval merge)")->type_name("JOURNAL");
  report->add_option("--bench", report_bench, "an opval bench --jsonl file (repeatable)")->type_name("BENCH.jsonl");
  report->add_option("-o,--output", report_output, "the HTML file to write")->required()->type_name("FILE.html");
  report->add_option("--title", report_title, "the report's title")->capture_default_str();
  std::string report_history;
  report->add_option("--history", report_history, "a run history (--history of run, bench, merge): its performance "
                                                  "trends with their change points, and the tiers' wall times")
      ->type_name("FILE");

  session_plan coverage_plan_;
  CLI::App* coverage = app.add_subcommand(
      "coverage", "what the generated suite (--tag generated) covers of each op on the backends under test, from "
                  "their declared support, without running a kernel (docs/COVERAGE.md)");
  add_options(*coverage, coverage_plan_, for_coverage);

  CLI::App* judge = app.add_subcommand(
      "judge", "judge arrays you already have: outputs saved from a model or another tool, for their inputs"
               " (.npy files named after the operands, .npz archives keyed by them, ONNX TensorProto .pb files;"
               " docs/JUDGE.md)");
  judge->add_option("descriptor", descriptor, "the problem the arrays are of, e.g. 'cast shape=1024 dt=f32:f32:bf16'")
      ->required();
  add_options(*judge, judge_plan_, for_judge);

  CLI::App* bench = app.add_subcommand(
      "bench", "check, then time, the suite --tag of every op (or --problems): latency with its confidence"
               " interval, GFLOP/s, GB/s");
  add_options(*bench, bench_plan_, for_bench);
  std::string base, next;
  compare_options co;
  double threshold_percent = 5;
  CLI::App* compare = bench->add_subcommand(
      "compare", "compare two `opval bench --jsonl` files: per case the ratio of medians with its CI, a"
                 " Mann-Whitney test, and a verdict; exit 1 when a case is slower");
  compare->add_option("base", base, "the baseline JSONL")->required()->type_name("BASE.jsonl");
  compare->add_option("new", next, "the JSONL to judge against it")->required()->type_name("NEW.jsonl");
  compare->add_option("--threshold", threshold_percent, "a change smaller than PCT percent is `same`")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0))
      ->type_name("PCT");
  compare->add_option("--alpha", co.alpha, "significance level of the Mann-Whitney test")
      ->capture_default_str()
      ->check(CLI::Range(1e-9, 0.5))
      ->type_name("A");

  // opval history: questions to the run history, and journals recorded into it.
  history_request asked;
  std::string trend_metric_name = "latency";
  std::vector<std::string> history_files;
  run_identity recorded_as;
  CLI::App* history = app.add_subcommand(
      "history", "the run history (--history FILE of run, merge, bench): since which commit a case fails, flaky "
                 "cases, performance trends with change points, the slowest cases, tier runtimes (docs/FLEET.md)");
  history->require_subcommand(1);
  const auto history_command = [&](const std::string& name, const std::string& help) {
    CLI::App* c = history->add_subcommand(name, help);
    c->add_option("--db", asked.database, "the history file (default: $OPVAL_HISTORY)")
        ->envname("OPVAL_HISTORY")->required()->type_name("FILE");
    return c;
  };
  CLI::App* history_record = history_command(
      "record", "record `opval run` journals or `opval bench --jsonl` files, each as one run");
  history_record->add_option("files", history_files, "the journals")->required()->type_name("FILE");
  history_record->add_option("--commit", recorded_as.commit, "the commit they ran at (default: detected as for run --history)")
      ->type_name("SHA");
  history_record->add_option("--tier", recorded_as.tier, "their tier")->type_name("NAME");
  history_record->add_option("--label", recorded_as.label, "free text (a branch, a pipeline)")->type_name("TEXT");
  const std::vector<std::pair<std::string, std::string>> questions = {
      {"failing", "cases failing at their latest run: since which commit, and where they last passed"},
      {"flaky", "cases with different verdicts at the same commit (and so the same inputs)"},
      {"trends", "per-case performance over runs with its change points (bench latency, or --metric case-time)"},
      {"slowest", "the cases with the largest recorded time (median of their latest runs)"},
      {"tiers", "each tier's runs over time: wall time, cases, failures, and changes of the wall time"},
      {"runs", "the recorded runs, newest first"}};
  std::vector<CLI::App*> question_commands;
  for (const auto& [name, help] : questions) {
    CLI::App* c = history_command(name, help);
    c->add_option("--op", asked.filter.op, "only this op's cases")->type_name("OP");
    c->add_option("--backend", asked.filter.backend, "only this backend's cases")->type_name("B");
    c->add_option("--case", asked.filter.text, "only cases whose descriptor contains TEXT")->type_name("TEXT");
    c->add_option("--limit", asked.filter.limit, "at most N rows (0: all)")->capture_default_str()->type_name("N");
    c->add_flag("--json", asked.json, "one JSON array instead of text");
    if (name == "trends") {
      c->add_option("--metric", trend_metric_name, "latency (opval bench's median) or case-time (opval run's)")
          ->capture_default_str()->check(CLI::IsMember({"latency", "case-time"}));
      c->add_flag("--all", asked.all, "every case with two runs or more, not only those that changed");
    }
    if (name == "slowest")
      c->add_option("--recent", asked.recent, "a case's time: the median of its latest N results")
          ->capture_default_str()->check(CLI::Range(1, 1000))->type_name("N");
    question_commands.push_back(c);
  }

  std::string model_path, save_path;
  std::vector<std::string> graph_inputs;
  bool graph_verbose = false;
  CLI::App* graph = app.add_subcommand(
      "graph", "models as graphs of opval ops (docs/GRAPH.md): what opval makes of each node, the fp64 graph reference, "
               "stacks judged node by node, triage, precision bisection");
  graph->require_subcommand(1);
  CLI::App* graph_info = graph->add_subcommand("info", "each node of an ONNX model: op type, and the opval op it becomes or why none");
  graph_info->add_option("model", model_path, "the ONNX model file")->required()->type_name("MODEL.onnx");
  // Listed for --help; run by the Python layer before parsing (python_commands.hpp).
  graph->add_subcommand("run", "run a model on stacks (ONNX Runtime, opval's backends) and judge each node alone on "
                               "the inputs the stack gave it: python -m opval graph run --help");
  graph->add_subcommand("triage", "the first node that goes wrong beyond what its inputs explain, and whether the "
                                  "compiler, the runtime or its kernel is to blame: python -m opval graph triage --help");
  graph->add_subcommand("precision", "which nodes must run in a higher precision for the outputs to meet a target when "
                                     "the rest runs in bf16 or f16: python -m opval graph precision --help");
  CLI::App* graph_reference = graph->add_subcommand(
      "reference", "run the fp64 graph reference (opval's fp64 op references, node by node) on given inputs");
  graph_reference->add_option("model", model_path, "the ONNX model file")->required()->type_name("MODEL.onnx");
  graph_reference->add_option("--inputs", graph_inputs, "the graph inputs: .npy named after them, .npz keyed by them, TensorProto .pb")
      ->required()->type_name("FILE");
  graph_reference->add_option("--save", save_path, "save every value (inputs, initializers, intermediates) to this .npz")
      ->type_name("FILE.npz");
  graph_reference->add_flag("-v,--verbose", graph_verbose, "also list each node: its role and opval descriptor");

  app.footer(footer_text);
  list->footer(footer_text);
  bench->footer(std::string(bench_closing_text) + footer_text);
  for (CLI::App* cmd : {run, repro, judge}) cmd->footer(std::string(closing_text) + footer_text);

  // CLI11 would report a mistyped command as a missing one; name it instead.
  const std::set<std::string> commands = {"list", "run", "repro", "judge", "bench", "coverage", "graph", "merge", "history", "report"};
  if (argc > 1 && argv[1][0] != '-' && !commands.contains(argv[1]))
    return bad_input(error_line(error(fmt::format("unknown command '{}' (known: list run repro judge bench coverage graph merge history report)", argv[1]))));
  if (argc > 2 && std::string_view(argv[1]) == "history" && argv[2][0] != '-' && std::string_view(argv[2]) != "record" &&
      std::ranges::find(history_questions(), argv[2]) == history_questions().end())
    return bad_input(error_line(error(fmt::format("unknown history command '{}' (known: record {})", argv[2],
                                                  fmt::join(history_questions(), " ")))));
  if (cli::runs_in_python(argc, argv)) return cli::run_in_python(argc, argv);
  if (argc > 2 && std::string_view(argv[1]) == "graph" && argv[2][0] != '-' &&
      !std::set<std::string>{"info", "reference"}.contains(argv[2]))
    return bad_input(
        error_line(error(fmt::format("unknown graph command '{}' (known: info reference run triage precision)", argv[2]))));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::CallForVersion*>(&e)) {
      std::cout << e.what() << '\n';
      return exit_passed;
    }
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    if (argc > 1 && commands.contains(argv[1]))
      if (const std::string misspelt = misspelt_option(*app.get_subcommand(argv[1]), argc, argv); !misspelt.empty())
        return bad_input(error_line(error(misspelt)));
    return bad_input(error_line(e));
  }
  if (*list) {
    print_catalog(what, list_verbose, std::cout);
    return exit_passed;
  }
  if (*graph_info) {
    graph::print_model(graph::read_onnx(model_path), std::cout);
    return exit_passed;
  }
  if (*report) {
    report_sources sources{journals, report_bench, {}, report_title};
    if (!report_history.empty()) sources.trends = history_trend_series(report_history);
    const std::string what = write_html_report(sources, report_output);
    std::cout << fmt::format("opval: report of {} written to {}\n", what, report_output);
    return exit_passed;
  }
  if (*graph_reference) return graph::reference_command(model_path, graph_inputs, save_path, graph_verbose, std::cout);
  if (*history_record) {
    record_history_files(asked.database, history_files, recorded_as, std::cout);
    return exit_passed;
  }
  for (CLI::App* c : question_commands)
    if (*c) {
      asked.what = c->get_name();
      asked.metric = trend_metric_name == "latency" ? trend_metric::latency : trend_metric::case_time;
      answer_history(asked, std::cout);
      return exit_passed;
    }
  if (const std::string& under = *run ? run_plan_.under : *bench ? bench_plan_.under : repro_plan_.under; !under.empty())
    rerun_under(under, argc, argv);
  if (*compare) {
    co.threshold = threshold_percent / 100;
    return print_comparison(std::cout, compare_bench_files(base, next, co), co) ? exit_passed : exit_failed;
  }
  for (const auto& [command, plan] :
       {std::pair{run, &run_plan_}, {repro, &repro_plan_}, {bench, &bench_plan_}, {judge, &judge_plan_},
        {coverage, &coverage_plan_}, {merge, &merge_plan_}})
    if (*command) check_timeout_applies(*command, *plan), plan->console = detect_console_style();
  if (*coverage) {
    coverage_plan_.selection.tag = std::string(generated_tag);
    return coverage_plan(coverage_plan_, std::cout, std::cerr);
  }
  if (*bench) return bench_plan(bench_plan_, std::cout);
  if (*merge) return merge_plan(merge_plan_, journals, std::cout, std::cerr);
  if (*run) {
    run_plan_.command = command_line(argc, argv);
    return run_plan(run_plan_, std::cout, std::cerr);
  }
  if (*judge) return judge_plan(judge_plan_, descriptor, std::cout, std::cerr);
  return repro_plan(repro_plan_, descriptor, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  // The hidden worker mode of process isolation (core/isolation.hpp), before any parsing.
  if (argc > 1 && std::string_view(argv[1]) == opval::worker_argument) return opval::worker_main(argc, argv);
  // This program serves as its own worker where no opval-worker is installed beside libopval.
  if (opval::default_worker_executable().empty()) ::setenv("OPVAL_WORKER", "/proc/self/exe", 0);
  try {
    return opval_main(argc, argv);
  } catch (const std::exception& e) {
    return bad_input(error_line(e));
  } catch (...) {
    return bad_input("unexpected error");
  }
}
