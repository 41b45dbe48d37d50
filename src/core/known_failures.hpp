#pragma once
// Known failures: cases where a library is known to disagree with its contract (documented
// findings, e.g. docs/BACKENDS.md). Listing them keeps them visible in every run, marked with
// their cause, without failing the run; a listed case that passes is reported as such.
//
// File format: `[backend]` starts a section; each other non-blank line is one problem
// descriptor (as `opval repro` takes it) known to fail on that backend; `# text` lines are
// comments, and the last comment before a descriptor is its cause.
#include <map>
#include <string>
#include <string_view>

namespace opval {

class known_failures {
 public:
  /// Reads a file; throws opval::error naming the file and line of a malformed entry.
  static known_failures load(const std::string& path);
  /// Parses the text of a file; `origin` names it in errors.
  static known_failures parse(std::string_view text, const std::string& origin);

  /// The cause recorded for `descriptor` on `backend`, or nullptr when it is not listed.
  /// Descriptors are compared in canonical form.
  const std::string* cause(std::string_view backend, std::string_view descriptor) const;
  /// Number of listed cases.
  std::size_t size() const { return causes_.size(); }
  /// Every listed descriptor of `backend`.
  std::map<std::string, std::string> of_backend(std::string_view backend) const;

 private:
  std::map<std::pair<std::string, std::string>, std::string> causes_;  // (backend, descriptor) -> cause
};

}  // namespace opval
