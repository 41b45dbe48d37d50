// run_session: a session's cases through the executor, the journal and the reporters
// (opval/session.hpp).
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "core/journal.hpp"
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

// A case whose worker died by the same signal the session got (a terminal's Ctrl-C reaches the
// whole process group) is the interruption's, not the kernel's: it is not a result.
bool died_of_interruption(const case_result& r) {
  return r.v.st == state::crash || r.v.st == state::timeout;
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
  std::optional<output_file> jsonl;
  std::unique_ptr<reporter> journal_writer;
  if (!jsonl_path.empty()) {
    // A resumed journal is read, then appended to: by design, not an input to protect.
    jsonl.emplace(jsonl_path, !s.resume.empty(), "JSONL", input_files(problems, {s.known_failures}));
    journal_writer = make_jsonl_reporter(jsonl->stream());
  }
  std::optional<output_file> junit;
  std::unique_ptr<reporter> junit_writer;
  if (!s.junit.empty()) {
    junit.emplace(s.junit, false, "JUnit XML", input_files(problems, {s.known_failures, s.resume}));
    junit_writer = make_junit_reporter(junit->stream(), "opval run");
    reporters.push_back(junit_writer.get());
  }
  const std::optional<known_failures> known =
      s.known_failures.empty() ? std::nullopt : std::optional(known_failures::load(s.known_failures));
  for (auto& r : reporters) r->on_start(o);
  if (jsonl && s.resume.empty()) {  // a resumed journal has them already
    for (const op_coverage& c : s.coverage) {
      jsonl->stream() << coverage_json(c) << '\n' << std::flush;
      jsonl->record_written();
    }
  }
  run_summary summary;
  const auto start = std::chrono::steady_clock::now();
  const detail::interruption_watch interruption;
  const std::size_t cases = problems.size() * backends.size();
  progress_meter progress(s.console.progress, STDERR_FILENO, s.console.width, cases);
  std::size_t done = 0;
  for (const located_problem& lp : problems) {
    for (const session_backend& sb : backends) {
      if (interruption.signal()) break;
      std::optional<case_result> recorded =
          journal ? journal->take(identify(lp.prob, sb.b->name(), o, lp.source, sb.ref)) : std::nullopt;
      if (!recorded) progress.started(lp.prob, sb.b->name());
      case_result result = recorded ? std::move(*recorded) : executor.run(lp, sb, o);
      if (!recorded && interruption.signal() && died_of_interruption(result)) break;
      ++done;
      if (known)
        if (const std::string* cause = known->cause(result.backend, result.descriptor)) result.known_failure = *cause;
      summary.add(result);
      progress.before_output();
      for (auto& r : reporters) r->on_result(result);
      progress.finished(result);
      if (!recorded && journal_writer) {
        journal_writer->on_result(result);
        jsonl->record_written();
      }
    }
  }
  progress.stop();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!s.quiet) print_coverage(s.coverage, s.verbose, s.console.width, out);
  for (auto& r : reporters) r->on_finish(summary);
  if (journal) say_what_was_resumed(s, *journal, recorded_at_start, summary, err);
  if (const int signo = interruption.signal()) {
    if (jsonl) jsonl->check_reached();
    if (junit) junit->record_written(), junit->check_reached();
    err << fmt::format("opval: interrupted by {} after {} of {} cases; {}\n", signo == SIGINT ? "SIGINT" : "SIGTERM",
                       done, cases, how_to_go_on(s, jsonl_path));
    return 128 + signo;
  }
  if (!any_case_ran(summary)) err << "opval: no case ran (all skipped or unimplemented)\n";
  if (jsonl) jsonl->check_reached();
  if (junit) junit->record_written(), junit->check_reached();
  return run_exit_code(summary);
}

}  // namespace opval
