// The session commands from a session_plan (opval/session.hpp): what `opval run`, `opval repro`
// and `opval judge` do once their arguments are parsed.
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "opval/judge.hpp"
#include "core/case_selection.hpp"
#include "core/output_file.hpp"
#include "core/tiers.hpp"
#include "opval/session.hpp"

namespace opval {
namespace {

/// The plan with its tier's suite, seeds and budget where it gave none (core/tiers.hpp).
session_plan resolve_tier(const session_plan& given) {
  session_plan plan = given;
  tier_choice c = apply_tier(plan.tier, plan.selection.tag, plan.seeds, plan.budget);
  plan.selection.tag = std::move(c.tag), plan.seeds = c.seeds, plan.budget = std::move(c.budget);
  return plan;
}

session_options session_of(const session_plan& plan, bool verbose) {
  return {.jsonl = plan.jsonl, .resume = plan.resume, .known_failures = plan.known_failures,
          .verbose = verbose, .tightness = plan.tightness, .quiet = plan.quiet, .junit = plan.junit,
          .shard = plan.shard, .console = plan.console, .command = plan.command, .history = plan.history,
          .commit = plan.commit, .tier = plan.tier, .label = plan.label,
          .budget_seconds = plan.budget.empty() ? 0 : parse_budget(plan.budget), .changes = plan.changes,
          .seeds = std::max(plan.seeds, 1)};
}

/// The backends under test, made through `executor`; `o.backend` lists their names, for the
/// report header.
std::vector<session_backend> backends_of(const session_plan& plan, run_options& o, case_executor& executor) {
  std::vector<session_backend> out = make_session_backends(plan.backends, plan.plugin, executor);
  o.backend = names_of(out);
  return out;
}

void check_resumable(const session_plan& plan) {
  if (plan.resume.empty()) return;
  if (!plan.jsonl.empty() && plan.jsonl != plan.resume)
    throw error("--resume appends to its journal: give no --jsonl, or the same file");
  if (!std::filesystem::is_regular_file(plan.resume))
    throw error("cannot resume: journal '" + plan.resume + "' is not a file");
}

// The problems are made after the backends and the reference, so that a bad name is reported
// before the problems are read.
template <class Problems>
int run_problems(const session_plan& plan, Problems problems, bool verbose, std::ostream& out, std::ostream& err) {
  const std::unique_ptr<case_executor> executor = make_executor(plan.isolation, plan.timeout);
  run_options o = make_run_options(plan, *executor);
  const std::vector<session_backend> backends = backends_of(plan, o, *executor);
  session_options s = session_of(plan, verbose);
  const std::vector<located_problem> selected = problems(backends, *executor, s.coverage);
  return run_session(selected, o, backends, *executor, s, out, err);
}

/// The problems of the plan's selection: its suite generated for `backends` (with what it
/// covers, into `coverage`) under `--tag generated`, else select_problems.
std::vector<located_problem> session_problems(const session_plan& plan, const std::vector<session_backend>& backends,
                                              case_executor& executor, std::vector<op_coverage>& coverage) {
  if (!plan.selection.problems.empty() || plan.selection.tag != generated_tag) return select_problems(plan.selection);
  session_suite suite = generate_session_suite(plan.selection, backends, executor, plan.run.seed);
  coverage = std::move(suite.coverage);
  return std::move(suite.problems);
}

}  // namespace

void check_output_files_differ(const session_plan& plan) {
  const std::pair<const char*, const std::string*> files[] = {
      {"--jsonl", &plan.jsonl}, {"--resume", &plan.resume}, {"--csv", &plan.bench.csv}, {"--junit", &plan.junit},
      {"--history", &plan.history}};
  for (std::size_t i = 0; i < std::size(files); ++i)
    for (std::size_t j = i + 1; j < std::size(files); ++j)
      if (names_same_file(*files[i].second, *files[j].second) && !(i == 0 && j == 1))  // --resume appends to its --jsonl
        throw error(fmt::format("{} and {} name the same file '{}': each record format needs its own file",
                                files[i].first, files[j].first, *files[j].second));
}

run_options make_run_options(const session_plan& plan, case_executor& executor) {
  run_options o = plan.run;
  o.reference.reset();
  if (!plan.reference.empty()) {
    o.reference.emplace();
    o.reference->ref = backend_ref_of(plan.reference);
    o.reference->impl = executor.make(o.reference->ref);
  }
  return o;
}

int run_plan(const session_plan& given, std::ostream& out, std::ostream& err) {
  const session_plan plan = resolve_tier(given);
  if (!plan.changes.empty() && plan.budget.empty())
    throw error("--changes orders the cases a --budget chooses: give --budget (or a --tier with one)");
  check_resumable(plan);
  check_output_files_differ(plan);
  const auto problems = [&](const std::vector<session_backend>& backends, case_executor& executor,
                            std::vector<op_coverage>& coverage) {
    return session_problems(plan, backends, executor, coverage);
  };
  return run_problems(plan, problems, plan.verbose, out, err);
}

int repro_plan(const session_plan& plan, const std::string& descriptor, std::ostream& out, std::ostream& err) {
  const auto problem = [&](const auto&, auto&, auto&) {
    return std::vector<located_problem>{{parse_problem(descriptor), "<command line>"}};
  };
  return run_problems(plan, problem, true, out, err);
}

int judge_plan(const session_plan& plan, const std::string& descriptor, std::ostream& out, std::ostream& err) {
  // Under process isolation the files are read, and the alternative reference made and run, in
  // a worker: a reference that crashes or hangs is the judgement's verdict, not opval's end.
  const std::unique_ptr<case_executor> executor = make_executor(plan.isolation, plan.timeout);
  run_options o = make_run_options(plan, *executor);
  o.backend = "judge";
  const case_result r = executor->judge(parse_problem(descriptor), plan.judge_inputs, plan.judge_outputs, o);
  std::vector<std::unique_ptr<reporter>> reporters;
  reporters.push_back(make_console_reporter(out, {.verbose = true, .width = plan.console.width,
                                                  .colour = plan.console.colour}));
  std::optional<output_file> jsonl;
  if (!plan.jsonl.empty()) {
    std::vector<std::string> inputs = plan.judge_inputs;
    inputs.insert(inputs.end(), plan.judge_outputs.begin(), plan.judge_outputs.end());
    jsonl.emplace(plan.jsonl, false, "JSONL", inputs);
    reporters.push_back(make_jsonl_reporter(jsonl->stream()));
  }
  run_summary summary;
  summary.add(r);
  for (auto& rep : reporters) rep->on_start(o), rep->on_result(r), rep->on_finish(summary);
  if (jsonl) jsonl->record_written();
  if (!any_case_ran(summary)) err << "opval: nothing was judged (" << r.v.reason << ")\n";
  if (jsonl) jsonl->check_reached();
  return run_exit_code(summary);
}

int coverage_plan(const session_plan& plan, std::ostream& out, std::ostream& err) {
  check_output_files_differ(plan);
  const std::unique_ptr<case_executor> executor = make_executor(plan.isolation, plan.timeout);
  run_options o = make_run_options(plan, *executor);
  const std::vector<session_backend> backends = backends_of(plan, o, *executor);
  const session_suite suite = generate_session_suite(plan.selection, backends, *executor, plan.run.seed);
  std::optional<output_file> jsonl;
  if (!plan.jsonl.empty()) jsonl.emplace(plan.jsonl, false, "JSONL");
  for (const op_coverage& c : suite.coverage)
    if (jsonl) jsonl->stream() << coverage_json(c) << '\n' << std::flush, jsonl->record_written();
  print_coverage(suite.coverage, plan.verbose, plan.console.width, out);
  out << fmt::format("\n{} generated case{} for {}\n", suite.problems.size(), suite.problems.size() == 1 ? "" : "s",
                     o.backend);
  if (jsonl) jsonl->check_reached();
  if (suite.problems.empty()) {
    err << "opval: the backends run no problem of the selection\n";
    return 1;
  }
  return 0;
}

int merge_plan(const session_plan& plan, const std::vector<std::string>& journals, std::ostream& out, std::ostream& err) {
  check_output_files_differ(plan);
  return merge_session(journals, session_of(plan, plan.verbose), out, err);
}

}  // namespace opval
