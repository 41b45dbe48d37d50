// run_session: a session's cases through the executor, the journal and the reporters
// (opval/session.hpp).
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "opval/error.hpp"
#include "core/journal.hpp"
#include "core/merge.hpp"
#include "core/run_cases.hpp"
#include "history/history.hpp"
#include "core/shards.hpp"
#include "core/interruption.hpp"
#include "core/known_failures.hpp"
#include "core/output_file.hpp"
#include "core/shell_quote.hpp"
#include "opval/session.hpp"
#include "report/progress.hpp"

namespace opval {
namespace {

std::vector<std::unique_ptr<reporter>> console_reporters(const session_options& s, bool several, std::ostream& out) {
  std::vector<std::unique_ptr<reporter>> reporters;
  // Before the console reporter, so their tables precede the closing line; not when quiet.
  if (s.tightness && !s.quiet) reporters.push_back(make_tightness_reporter(out));
  if (several && !s.quiet) reporters.push_back(make_side_by_side_reporter(out, s.console.width));
  reporters.push_back(make_console_reporter(out, {.verbose = s.verbose, .show_backend = several, .quiet = s.quiet,
                                                  .width = s.console.width, .colour = s.console.colour}));
  return reporters;
}

void say_what_was_resumed(const session_options& s, const journal_index& journal, std::size_t recorded_at_start,
                          const run_summary& summary, std::ostream& err) {
  const std::size_t taken = recorded_at_start - journal.left();
  err << fmt::format("opval: resumed '{}': {} case{} taken from the journal, {} run now\n", s.resume, taken,
                     taken == 1 ? "" : "s", summary.total() - static_cast<int>(taken));
  if (journal.left() > 0)
    err << fmt::format("opval: warning: {} journal record{} match no case of this run (other options?)\n",
                       journal.left(), journal.left() == 1 ? "" : "s");
}

/// How an interrupted run goes on: its command with --resume and its journal (the journal
/// already named by --jsonl or --resume), or that it cannot, having none.
std::string how_to_go_on(const session_options& s, const std::string& journal) {
  if (journal.empty()) return "no journal to resume from (give --jsonl FILE to be able to resume)";
  if (s.command.empty()) return fmt::format("resume with --resume {}", detail::shell_word(journal));
  if (!s.resume.empty()) return "resume with: " + s.command;
  return fmt::format("resume with: {} --resume {}", s.command, detail::shell_word(journal));
}

// The files a session writes besides the console: its journal (--jsonl, appended to when it
// resumes one) and JUnit XML, neither of them one of the run's `inputs`.
class session_files {
 public:
  session_files(const session_options& s, const std::string& jsonl_path, bool append,
                const std::vector<std::string>& inputs) {
    if (!jsonl_path.empty()) {
      jsonl_.emplace(jsonl_path, append, "JSONL", inputs);
      journal_writer_ = make_jsonl_reporter(jsonl_->stream());
    }
    if (!s.junit.empty()) {
      std::vector<std::string> junit_inputs = inputs;
      if (!s.resume.empty()) junit_inputs.push_back(s.resume);
      junit_.emplace(s.junit, false, "JUnit XML", junit_inputs);
      junit_writer_ = make_junit_reporter(junit_->stream(), "opval run");
    }
  }
  /// The JUnit writer, which takes every result as the console does (null without --junit).
  reporter* junit() { return junit_writer_.get(); }
  bool has_journal() const { return jsonl_.has_value(); }
  /// A generated suite's coverage lines, first in the journal.
  void coverage(const std::vector<std::string>& lines) {
    if (!jsonl_) return;
    for (const std::string& line : lines) {
      jsonl_->stream() << line << '\n' << std::flush;
      jsonl_->record_written();
    }
  }
  void record(const case_result& r) {
    if (!journal_writer_) return;
    journal_writer_->on_result(r);
    jsonl_->record_written();
  }
  /// Throws opval::error when records did not reach a file (the verdicts then do not stand).
  void check_reached() {
    if (jsonl_) jsonl_->check_reached();
    if (junit_) junit_->record_written(), junit_->check_reached();
  }

 private:
  std::optional<output_file> jsonl_, junit_;
  std::unique_ptr<reporter> journal_writer_, junit_writer_;
};

// The shard of every case, in the run's order (each problem on each backend), and how many
// are this shard's.
struct shard_plan {
  std::vector<std::int64_t> of_case;
  std::int64_t cases_here = 0;
};

shard_plan plan_shards(const shard_choice& shard, const std::vector<double>& costs) {
  shard_plan plan{assign_shards(costs, shard.count), 0};
  plan.cases_here = std::ranges::count(plan.of_case, shard.index);
  return plan;
}

// A case whose worker died by the same signal the session got (a terminal's Ctrl-C reaches the
// whole process group) is the interruption's, not the kernel's: it is not a result.
bool died_of_interruption(const case_result& r) {
  return r.v.st == state::crash || r.v.st == state::timeout;
}

// The history a session reads and records in (--history), opened before any case runs so that
// a file that is no history fails first.
std::optional<history_db> session_history(const session_options& s) {
  if (s.history.empty()) return std::nullopt;
  return history_db(s.history, true);
}

// A shard records nothing: the merge records the whole run.
void record_in_history(std::optional<history_db>& db, const session_options& s, std::span<const case_result> results,
                       std::optional<double> wall_seconds, const std::string& source, std::ostream& err) {
  if (!db || !s.shard.empty()) return;
  const run_identity identity = session_run_identity(s.commit, s.tier, s.label, source, wall_seconds);
  const std::int64_t run = db->record_run(identity, results);
  err << recorded_note(s.history, run, results.size(), identity) << '\n';
}

}  // namespace

int run_session(const std::vector<located_problem>& problems, const run_options& o,
                const std::vector<session_backend>& backends, case_executor& executor, const session_options& s,
                std::ostream& out, std::ostream& err) {
  std::vector<std::unique_ptr<reporter>> owned = console_reporters(s, backends.size() > 1, out);
  std::vector<reporter*> reporters;
  for (auto& r : owned) reporters.push_back(r.get());
  if (s.also) reporters.push_back(s.also);
  std::optional<journal_index> journal;
  if (!s.resume.empty()) journal = journal_index(recover_journal(s.resume));
  const std::size_t recorded_at_start = journal ? journal->left() : 0;
  const std::string jsonl_path = s.resume.empty() ? s.jsonl : s.resume;
  // A resumed journal is read, then appended to: by design, not an input to protect.
  session_files files(s, jsonl_path, !s.resume.empty(), input_files(problems, {s.known_failures}));
  if (files.junit()) reporters.push_back(files.junit());
  const std::optional<known_failures> known =
      s.known_failures.empty() ? std::nullopt : std::optional(known_failures::load(s.known_failures));
  const std::optional<shard_choice> shard = parse_shard(s.shard, process_environment());
  std::optional<history_db> history = session_history(s);
  const case_plan plan = plan_run_cases(
      problems, backends,
      {.seed = o.seed, .seeds = s.seeds, .budget_seconds = s.budget_seconds, .history = history ? &*history : nullptr,
       .changes = s.changes, .commit = s.budget_seconds > 0 && s.commit.empty() ? detect_commit() : s.commit});
  const shard_plan shards = shard ? plan_shards(*shard, plan.seconds) : shard_plan{};
  if (shard) acknowledge_sharding(*shard);
  std::vector<case_result> results;  // for the history, which a shard does not record in
  const bool records_history = history && !shard;
  if (!plan.note.empty()) err << "opval: " << plan.note << '\n';
  for (auto& r : reporters) r->on_start(o);
  if (s.resume.empty()) {  // a resumed journal has them already
    std::vector<std::string> lines = plan.header_lines;
    for (const op_coverage& c : s.coverage) lines.push_back(coverage_json(c));
    files.coverage(lines);
  }
  run_summary summary;
  const auto start = std::chrono::steady_clock::now();
  const detail::interruption_watch interruption;
  const std::size_t all_cases = plan.cases.size();
  const std::size_t cases = shard ? static_cast<std::size_t>(shards.cases_here) : all_cases;
  progress_meter progress(s.console.progress, STDERR_FILENO, s.console.width, cases);
  std::size_t done = 0;
  run_options at_seed = o;
  for (std::size_t k = 0; k < plan.cases.size(); ++k) {
    if (interruption.signal()) break;
    if (shard && shards.of_case[k] != shard->index) continue;
    const planned_case& c = plan.cases[k];
    at_seed.seed = c.seed;
    std::optional<case_result> recorded =
        journal ? journal->take(identify(c.lp->prob, c.sb->b->name(), at_seed, c.lp->source, c.sb->ref)) : std::nullopt;
    if (!recorded) progress.started(c.lp->prob, c.sb->b->name());
    case_result result = recorded ? std::move(*recorded) : executor.run(*c.lp, *c.sb, at_seed);
    if (!recorded && interruption.signal() && died_of_interruption(result)) break;
    ++done;
    if (shard)
      result.shard = shard_position{shard->index, shard->count, static_cast<std::int64_t>(k),
                                    static_cast<std::int64_t>(all_cases), shards.cases_here};
    result.choice = c.choice;
    if (known)
      if (const std::string* cause = known->cause(result.backend, result.descriptor)) result.known_failure = *cause;
    summary.add(result);
    progress.before_output();
    for (auto& r : reporters) r->on_result(result);
    progress.finished(result);
    if (!recorded) files.record(result);
    if (records_history) results.push_back(std::move(result));
  }
  progress.stop();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!s.quiet) print_coverage(s.coverage, s.verbose, s.console.width, out);
  for (auto& r : reporters) r->on_finish(summary);
  if (journal) say_what_was_resumed(s, *journal, recorded_at_start, summary, err);
  if (const int signo = interruption.signal()) {
    files.check_reached();
    err << fmt::format("opval: interrupted by {} after {} of {} cases; {}\n", signo == SIGINT ? "SIGINT" : "SIGTERM",
                       done, cases, how_to_go_on(s, jsonl_path));
    return 128 + signo;
  }
  files.check_reached();
  record_in_history(history, s, results, summary.seconds, "opval run", err);
  if (shard && shards.cases_here == 0) {
    // More shards than cases: this one has nothing to do, which is no failure of the run.
    err << fmt::format("opval: shard {}/{} has no case (the run has {})\n", shard->index, shard->count, all_cases);
    return 0;
  }
  if (!any_case_ran(summary)) err << "opval: no case ran (all skipped or unimplemented)\n";
  return run_exit_code(summary);
}

int merge_session(const std::vector<std::string>& journals, const session_options& s, std::ostream& out,
                  std::ostream& err) {
  const merged_run run = merge_journals(journals);
  run_options o;  // the header's: the backends in their first appearance's order, the first case's seed
  std::vector<std::string> backends;
  for (const case_result& r : run.records)
    if (std::ranges::find(backends, r.backend) == backends.end()) backends.push_back(r.backend);
  o.backend = fmt::format("{}", fmt::join(backends, ","));
  if (!run.records.empty()) o.seed = run.records.front().seed, o.pol = parse_policy(run.records.front().v.policy);
  std::vector<std::unique_ptr<reporter>> owned = console_reporters(s, backends.size() > 1, out);
  std::vector<reporter*> reporters;
  for (auto& r : owned) reporters.push_back(r.get());
  if (s.also) reporters.push_back(s.also);
  session_files files(s, s.jsonl, false, journals);
  if (files.junit()) reporters.push_back(files.junit());
  std::optional<history_db> history = session_history(s);
  for (auto& r : reporters) r->on_start(o);
  files.coverage(run.coverage);
  run_summary summary;
  for (const case_result& r : run.records) {
    summary.add(r);
    for (auto& rep : reporters) rep->on_result(r);
    files.record(r);
  }
  for (auto& r : reporters) r->on_finish(summary);
  err << fmt::format("opval: merged {} shard{}: {} cases\n", run.shards, run.shards == 1 ? "" : "s",
                     run.records.size());
  if (!any_case_ran(summary)) err << "opval: no case ran (all skipped or unimplemented)\n";
  files.check_reached();
  record_in_history(history, s, run.records, run.slowest_shard_seconds, "opval merge", err);
  return run_exit_code(summary);
}

}  // namespace opval
