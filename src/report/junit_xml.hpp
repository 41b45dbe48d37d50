#pragma once
// JUnit XML as pytest's --junitxml writes it (junit_family xunit2): a <testsuites> holding one
// <testsuite> with its counts, time, timestamp and host, and one <testcase> per case with a
// <failure>, <error> or <skipped> child when it did not pass. What CI systems (Jenkins, GitLab,
// GitHub's test reporters) read.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "opval/runner.hpp"

namespace opval {

struct junit_case {
  enum class outcome { passed, failure, error, skipped };
  std::string classname;  ///< "opval.<backend>.<op>": CI systems group cases by it
  std::string name;       ///< the problem's descriptor
  double seconds = 0;
  outcome result = outcome::passed;
  std::string type;       ///< the child's type attribute: "FAILED", "pytest.xfail", ...
  std::string message;    ///< one line: the reason
  std::string text;       ///< the explanation and the repro command
  std::string file;       ///< where the problem came from ("tests/problems/x.txt:12"), when a file
  std::vector<std::pair<std::string, std::string>> properties;  ///< per case (median, GFLOP/s, ...)
};

class junit_document {
 public:
  explicit junit_document(std::string suite) : suite_(std::move(suite)) {}
  void add(junit_case c) { cases_.push_back(std::move(c)); }
  void property(std::string name, std::string value) { properties_.emplace_back(std::move(name), std::move(value)); }
  /// The whole document; `seconds` is the suite's wall time.
  void write(std::ostream& out, double seconds) const;

 private:
  std::string suite_;
  std::vector<std::pair<std::string, std::string>> properties_;
  std::vector<junit_case> cases_;
};

/// `text` with &, <, >, " and ' escaped, and the characters XML 1.0 cannot hold (control
/// characters other than tab and line ends, invalid UTF-8) replaced by U+FFFD.
std::string xml_escape(const std::string& text);

/// A run's or a bench check's case as a testcase: FAILED and MISTRUSTED a <failure>, CRASH and
/// TIMEOUT an <error>, SKIPPED and UNIMPLEMENTED a <skipped> with the reason, a listed known
/// failure a <skipped type="known failure"> (pytest's xfail), each with its outputs' reasons and
/// bounds and the repro command.
junit_case junit_case_of(const case_result& r);

}  // namespace opval
