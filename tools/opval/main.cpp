// The opval command line. Thin on purpose: parse arguments, resolve names through the
// registries, hand problems to the runner and results to the reporters. Every user error
// becomes one line on stderr and exit code 2; a case that fails or throws is a verdict and
// never stops the run. The help text here and docs/CLI.md describe the same commands
// (tests/cpp/test_cli.cpp checks that every option appears in both).
#include <algorithm>
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
#include "opval/build_info.hpp"
#include "opval/error.hpp"
#include "opval/known_failures.hpp"
#include "opval/op_spec.hpp"
#include "opval/plugin_backend.hpp"
#include "opval/policy.hpp"
#include "opval/problem.hpp"
#include "opval/reporter.hpp"
#include "opval/runner.hpp"

namespace {

using namespace opval;

constexpr int exit_passed = 0;
constexpr int exit_failed = 1;
constexpr int exit_bad_input = 2;

const std::vector<std::string> suite_tags = {"smoke", "regression"};

// ---------------------------------------------------------------- arguments

struct list_args {
  std::string what;
  bool verbose = false;
};

/// Options shared by `run` and `repro`: how each case runs and where results go.
struct case_args {
  std::vector<std::string> backends;  ///< empty: sim, unless a plugin is given
  std::string plugin;                 ///< a kernel plugin: one more backend under test
  std::string policy = "bound";
  std::uint64_t seed = 1;
  int worst = 5;
  bool no_perturb = false;
  bool verbose = false;
  bool tightness = false;
  std::string jsonl;
  std::string known_failures;  ///< a known-failures file (opval/known_failures.hpp)
};

struct run_args {
  case_args c;
  std::vector<std::string> ops, contracts, problems;
  std::string tag = "smoke";
};

struct repro_args {
  case_args c;
  std::string descriptor;
};

void add_case_options(CLI::App& cmd, case_args& a) {
  cmd.add_option("--backend", a.backends,
                 "backends under test, comma-separated or repeated; several are compared side by"
                 " side on the same inputs (default sim; see `opval list backends`)")
      ->delimiter(',')
      ->type_name("B[,B...]");
  cmd.add_option("--plugin", a.plugin,
                 "also test the kernel plugin (shared library, see docs/PLUGINS.md); alone when"
                 " no --backend is given")
      ->type_name("PATH");
  cmd.add_option("--policy", a.policy,
                 "tolerance policy: bound, relative-to-sim[:m=M], exact, fixed:rtol=R,atol=A")
      ->capture_default_str();
  cmd.add_option("--seed", a.seed, "seed of the input fill")->capture_default_str();
  cmd.add_option("--worst", a.worst, "number of worst elements recorded per output")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd.add_flag("--no-perturb", a.no_perturb,
               "skip the MISTRUSTED check that re-runs with a perturbed input");
  cmd.add_option("--jsonl", a.jsonl, "also write one JSON record per case to FILE")
      ->type_name("FILE");
  cmd.add_option("--known-failures", a.known_failures,
                 "cases known to fail on a backend (a documented library disagreement): shown as"
                 " FAILED (known), they do not fail the run")
      ->type_name("FILE");
}

// ---------------------------------------------------------------- list

std::string joined(const std::vector<std::string>& items, std::string_view sep = " ") {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : std::string(sep)) + item;
  return s;
}

std::string attr_kind_name(attr_kind k) {
  switch (k) {
    case attr_kind::integer: return "int";
    case attr_kind::real: return "real";
    case attr_kind::boolean: return "bool";
    case attr_kind::choice: return "choice";
    case attr_kind::dims: return "dims";
  }
  return "?";
}

void list_attrs(const op_spec& op) {
  for (const attr_def& d : op.schema().defs()) {
    std::string detail = attr_kind_name(d.kind);
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

void list_backends() {
  for (const std::string& name : backend_names()) {
    std::string version;
    try {
      version = make_backend(name)->version();
    } catch (const std::exception& e) {
      version = std::string("unavailable: ") + e.what();
    }
    fmt::print("{:<16} {}\n", name, version);
  }
}

void list_policies() {
  const std::pair<const char*, const char*> policies[] = {
      {"bound[:false_alarm=P]",
       "default: per-element bound from the op's error analysis of the contract (P: allowed "
       "false-alarm rate of the probabilistic bound, default 1e-6)"},
      {"relative-to-sim[:m=M]",
       "|err| <= M * max(error of the contract-exact sim, u_dst * max|ref|), M default 2"},
      {"exact", "bitwise equal to the rounded fp64 reference"},
      {"fixed:rtol=R,atol=A", "|err| <= A + R * |ref| (a guessed tolerance, for comparison)"}};
  for (const auto& [syntax, what] : policies) fmt::print("{:<24} {}\n", syntax, what);
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

/// A --problems value names a file when one exists there, or when it cannot be a
/// descriptor: a single word that is a path, has an extension, or is not an op name (a named
/// shape set of tests/problems/, such as `resnet50_conv`). Else it is a descriptor.
bool names_a_file(const std::string& item) {
  if (std::filesystem::exists(item)) return true;
  bool one_word = item.find_first_of(" \t=") == std::string::npos;
  if (!one_word) return false;
  if (item.find_first_of("/.") != std::string::npos) return true;
  const auto& ops = all_ops();
  return std::none_of(ops.begin(), ops.end(), [&](const op_spec* s) { return s->name() == item; });
}

/// parse_problem and read_problem_file validate each problem, so an impossible shape is
/// reported here, before anything runs.
std::vector<located_problem> problems_from(const std::string& item) {
  if (!names_a_file(item)) return {{parse_problem(item), "<command line>"}};
  if (std::filesystem::is_directory(item))
    throw error("cannot read problem file '" + item + "': it is a directory");
  return read_problem_file(item);
}

/// The canonical `dt=` strings the user asked for (so `bf16` selects bf16:f32:bf16).
std::set<std::string> canonical_contracts(const std::vector<std::string>& texts) {
  std::set<std::string> out;
  for (const std::string& t : texts) out.insert(parse_contract_types(t).types_string());
  return out;
}

std::vector<located_problem> select_problems(const run_args& a) {
  for (const std::string& op : a.ops) find_op(op);  // an unknown op is an error, not a no-op
  if (std::find(suite_tags.begin(), suite_tags.end(), a.tag) == suite_tags.end())
    throw error("unknown suite tag '" + a.tag + "' (known: " + joined(suite_tags) + ")");
  std::vector<located_problem> all;
  if (a.problems.empty()) {
    all = suite_problems(a.tag, a.ops);
  } else {
    for (const std::string& item : a.problems) {
      std::vector<located_problem> more = problems_from(item);
      all.insert(all.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
  }
  std::set<std::string> contracts = canonical_contracts(a.contracts);
  std::erase_if(all, [&](const located_problem& lp) {
    bool op_ok = a.ops.empty() ||
                 std::find(a.ops.begin(), a.ops.end(), lp.prob.op()) != a.ops.end();
    bool dt_ok = contracts.empty() || contracts.contains(lp.prob.dt.types_string());
    return !op_ok || !dt_ok;
  });
  if (all.empty()) throw error("no problems selected: the filters (--op, --contract, --tag) match none");
  return all;
}

// ---------------------------------------------------------------- running

/// A case that threw is recorded as FAILED with the message, so one broken case (or op)
/// cannot hide the results of the others.
case_result run_guarded(const located_problem& lp, backend& b, const run_options& o) {
  try {
    return run_case(lp.prob, b, o, lp.source);
  } catch (const std::exception& e) {
    case_result r;
    r.descriptor = lp.prob.to_string();
    r.op = std::string(lp.prob.op());
    r.contract = lp.prob.dt.types_string();
    r.seed = o.seed;
    r.backend = b.name();
    r.backend_version = b.version();
    r.source = lp.source;
    r.v.st = state::failed;
    r.v.reason = std::string("exception: ") + e.what();
    r.v.policy = o.pol.to_string();
    return r;
  }
}

run_options make_run_options(const case_args& a) {
  run_options o;
  o.pol = parse_policy(a.policy);
  o.seed = a.seed;
  o.worst_k = a.worst;
  o.perturb_check = !a.no_perturb;
  return o;
}

std::ofstream open_jsonl(const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream out(p);
  if (!out) throw error("cannot write JSONL file '" + path + "'");
  return out;
}

/// The backends under test, each once, in the order given: the --backend ones (sim when
/// neither --backend nor --plugin is given), then the --plugin library. All are made before
/// anything runs, so an unknown name is bad input. o.backend lists their names, for the
/// report header.
std::vector<std::unique_ptr<backend>> make_case_backends(const case_args& a, run_options& o) {
  std::vector<std::string> names = a.backends;
  if (names.empty() && a.plugin.empty()) names.push_back("sim");
  std::vector<std::unique_ptr<backend>> out;
  std::set<std::string> seen;
  for (const std::string& name : names)
    if (seen.insert(name).second) out.push_back(make_backend(name));
  if (!a.plugin.empty()) out.push_back(load_plugin_backend(a.plugin));
  std::vector<std::string> made;
  for (const auto& b : out) made.push_back(b->name());
  o.backend = joined(made, ",");
  return out;
}

/// The runner writes `--backend NAME`; a plugin is reproduced by its path instead.
void point_repro_at_plugin(case_result& r, const case_args& a) {
  if (a.plugin.empty() || !r.backend.starts_with("plugin:")) return;
  std::string from = "--backend " + r.backend;
  if (auto at = r.repro.find(from); at != std::string::npos)
    r.repro.replace(at, from.size(), "--plugin '" + a.plugin + "'");
}

/// Runs every problem on every backend through the reporters (a problem's backends one after
/// the other, all with the same seed and so the same inputs); the exit code says whether all
/// ran and passed.
int run_problems(const std::vector<located_problem>& problems, const run_options& o,
                 const std::vector<std::unique_ptr<backend>>& backends, const case_args& a,
                 bool verbose) {
  const bool several = backends.size() > 1;
  std::vector<std::unique_ptr<reporter>> reporters;
  // Before the console reporter, so their tables precede the closing line.
  if (a.tightness) reporters.push_back(make_tightness_reporter(std::cout));
  if (several) reporters.push_back(make_side_by_side_reporter(std::cout));
  reporters.push_back(make_console_reporter(std::cout, verbose, several));
  std::ofstream jsonl;
  if (!a.jsonl.empty()) {
    jsonl = open_jsonl(a.jsonl);
    reporters.push_back(make_jsonl_reporter(jsonl));
  }
  const std::optional<known_failures> known =
      a.known_failures.empty() ? std::nullopt : std::optional(known_failures::load(a.known_failures));
  for (auto& r : reporters) r->on_start(o);
  run_summary summary;
  auto start = std::chrono::steady_clock::now();
  for (const located_problem& lp : problems) {
    for (const auto& b : backends) {
      case_result result = run_guarded(lp, *b, o);
      point_repro_at_plugin(result, a);
      if (known)
        if (const std::string* cause = known->cause(result.backend, result.descriptor)) result.known_failure = *cause;
      summary.add(result);
      for (auto& r : reporters) r->on_result(result);
    }
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& r : reporters) r->on_finish(summary);
  bool any_failure = summary.failed + summary.mistrusted - summary.known_failed > 0;
  bool any_ran = summary.passed + summary.failed + summary.mistrusted > 0;
  if (!any_ran) std::cerr << "opval: no case ran (all skipped or unimplemented)\n";
  return any_failure || !any_ran ? exit_failed : exit_passed;
}

// Names (policy, backend) are checked before problems are selected or anything runs.
int run_command(const run_args& a) {
  run_options o = make_run_options(a.c);
  std::vector<std::unique_ptr<backend>> backends = make_case_backends(a.c, o);
  return run_problems(select_problems(a), o, backends, a.c, a.c.verbose);
}

int repro_command(const repro_args& a) {
  run_options o = make_run_options(a.c);
  std::vector<std::unique_ptr<backend>> backends = make_case_backends(a.c, o);
  return run_problems({{parse_problem(a.descriptor), "<command line>"}}, o, backends, a.c, true);
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

int bad_input(const std::string& message) {
  std::cerr << "opval: error: " << message << std::endl;
  return exit_bad_input;
}

// ---------------------------------------------------------------- main

constexpr const char* footer_text =
    "Exit codes: 0 all cases that ran passed (and at least one ran); 1 a case FAILED or was\n"
    "MISTRUSTED, or none ran; 2 bad input (one line on stderr). Full reference: docs/CLI.md";

constexpr const char* closing_text =
    "Output: a table (op, descriptor, contract, state, max ulps, max err/bound, time); every case\n"
    "that did not pass is explained under its row with the worst elements and its repro command.\n"
    "With several backends, rows name their backend and a side-by-side table follows.\n"
    "The last line is `N passed, N failed, N skipped` (failed counts MISTRUSTED, skipped counts\n"
    "UNIMPLEMENTED).\n";

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
  run->add_option("--op", ra.ops, "only these ops (repeatable)")->type_name("OP");
  run->add_option("--tag", ra.tag, "suite to run when no --problems: smoke or regression")
      ->capture_default_str();
  run->add_option("--contract", ra.contracts,
                  "only cases with this dt contract, e.g. bf16 or f16:f32:f16 (repeatable)")
      ->type_name("DT");
  run->add_option("--problems", ra.problems,
                  "a batch file (one descriptor per line) or a descriptor string (repeatable)")
      ->type_name("FILE|DESCRIPTOR");
  add_case_options(*run, ra.c);
  run->add_flag("-v,--verbose", ra.c.verbose, "explain every case, not only those that did not pass");
  run->add_flag("--tightness", ra.c.tightness,
                "end with a table of observed error / bound per op and contract");

  repro_args pa;
  CLI::App* repro = app.add_subcommand(
      "repro", "rerun one case verbosely (the command printed under every failure)");
  repro->add_option("descriptor", pa.descriptor, "the problem, e.g. 'matmul m=4 n=5 k=3 dt=bf16'")
      ->required();
  add_case_options(*repro, pa.c);

  app.footer(footer_text);
  list->footer(footer_text);
  run->footer(std::string(closing_text) + footer_text);
  repro->footer(std::string(closing_text) + footer_text);

  // CLI11 would report a mistyped command as a missing one; name it instead.
  const std::set<std::string> commands = {"list", "run", "repro"};
  if (argc > 1 && argv[1][0] != '-' && !commands.contains(argv[1]))
    return bad_input(fmt::format("unknown command '{}' (known: list run repro)", argv[1]));
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
  if (*run) return run_command(ra);
  return repro_command(pa);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return opval_main(argc, argv);
  } catch (const std::exception& e) {
    return bad_input(one_line(e));
  } catch (...) {
    return bad_input("unexpected error");
  }
}
