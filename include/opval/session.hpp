#pragma once
// A session: the cases a run selects, runs and reports, in the library so that `opval run`,
// `opval bench`, Python's opval.run and opval.check select, run and report alike. This header
// holds its first part, the problem selection (docs/CLI.md, "Batch files and shape sets").
#include <string>
#include <vector>

#include "opval/problem.hpp"

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

}  // namespace opval
