#pragma once
// A session: the cases a run selects, runs and reports, in the library so that `opval run`,
// `opval bench`, Python's opval.run and opval.check select, run and report alike: the problem
// selection (docs/CLI.md, "Batch files and shape sets"), the run of a session's cases with
// its journal, resume and known failures, and the exit rule.
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "opval/case_executor.hpp"
#include "opval/problem.hpp"
#include "opval/reporter.hpp"

namespace opval {

/// The suite tags every op's suite answers to.
const std::vector<std::string>& suite_tags();

/// Which problems a session runs: the items of `problems` when given (descriptors, batch
/// files, or named shape sets of tests/problems/ such as `resnet50_conv`), else the suite
/// `tag` of `ops` (every op's when empty); of those, only the problems of `ops` and of
/// `contracts` (dt= strings; `bf16` selects bf16:f32:bf16), when given.
struct problem_selection {
  std::string tag = "smoke";
  std::vector<std::string> ops;
  std::vector<std::string> contracts;
  std::vector<std::string> problems;
  std::string inline_source = "<command line>";  ///< the source of a problem given as a descriptor
};

/// The selected problems, in order, with where each came from. Throws opval::error naming the
/// problem: an unknown op or tag, a malformed descriptor or contract, an unreadable, empty or
/// directory problem file, or filters that leave nothing.
std::vector<located_problem> select_problems(const problem_selection& s);

/// Whether a `problems` item names a batch file or shape set rather than being a descriptor:
/// a file exists there, or it is one word that is a path, has an extension or is no op name.
bool names_problem_file(const std::string& item);

/// What a run session does around its cases (opval run, opval repro).
struct session_options {
  std::string jsonl;           ///< the journal: one JSON record per case, flushed as it ends
  std::string resume;          ///< a journal to finish: its cases are not run again, the rest appended
  std::string known_failures;  ///< a known-failures file (opval/known_failures.hpp)
  std::string plugin;          ///< the plugin under test's path, for its repro lines
  bool verbose = false;        ///< explain every case, not only those that did not pass
  bool tightness = false;      ///< end with the error/bound table per op and contract
};

/// Runs every problem on every backend (a problem's backends one after the other, on the same
/// inputs) through the reporters on `out`, notes on `err`; returns the exit code
/// (run_exit_code). With a journal to resume, the cases it records are replayed into the
/// reporters, so they show the whole run, and only the others run.
int run_session(const std::vector<located_problem>& problems, const run_options& o,
                const std::vector<session_backend>& backends, case_executor& executor, const session_options& s,
                std::ostream& out, std::ostream& err);

/// An output file (a journal, bench JSON Lines or CSV), appended to when `append`; its folder is
/// made when missing. `what` names it in the error when it cannot be written.
std::ofstream open_output(const std::string& path, bool append, std::string_view what = "JSONL");

/// The repro command of a plugin's case, which the runner writes with `--backend plugin:NAME`,
/// with `--plugin PATH` instead.
void point_repro_at_plugin(case_result& r, const std::string& plugin);

/// The exit rule of a run: 0 when every case that ran passed (listed known failures aside)
/// and at least one ran; 1 otherwise (2, bad input, is the callers').
int run_exit_code(const run_summary& s);
/// Whether any case of the run ran (was neither skipped nor unimplemented).
bool any_case_ran(const run_summary& s);

}  // namespace opval
