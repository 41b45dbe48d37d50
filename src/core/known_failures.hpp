#pragma once
// Known failures: cases where a library is known to disagree with its contract (documented
// findings, e.g. docs/BACKENDS.md). Listing them keeps them visible in every run, marked with
// their cause, without failing the run; a listed case that passes is reported as such.
//
// File format: `[backend]` starts a section; each other non-blank line is one problem
// descriptor (as `opval repro` takes it) known to fail on that backend; `# text` lines are
// comments, and the last comment before a descriptor is its cause. A section may hold only on
// some CPUs, where the library dispatches to other kernels: `[backend where flag !flag ...]`
// applies where this CPU has every `flag` and none of the `!flag` (Linux's /proc/cpuinfo names,
// e.g. `[onnxruntime where !avx512_vnni !avx_vnni]`); elsewhere its entries are checked, not listed.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace opval {

/// Whether a section header may name `name`: one of opval's backends (built here or not), a
/// framework adapter of the Python layer, or a kernel (plugin:NAME, python:NAME).
bool names_a_backend(std::string_view name);

class known_failures {
 public:
  /// Reads a file; throws opval::error naming the file and line of a malformed entry.
  static known_failures load(const std::string& path);
  /// Parses the text of a file; `origin` names it in errors. Section conditions are judged
  /// against `cpu_flags` (this CPU's vector flags by default).
  static known_failures parse(std::string_view text, const std::string& origin);
  static known_failures parse(std::string_view text, const std::string& origin,
                              const std::vector<std::string>& cpu_flags);

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
