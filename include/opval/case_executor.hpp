#pragma once
// Where a session's cases run: in a worker process (the default: a crash or hang is a verdict,
// and backends and plugins are made there first), or in the calling process. The CLI's run,
// repro and bench and the library's run_session take one.
#include <memory>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/isolation.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval {

/// A backend under test, and how a worker process makes the same one. Shared: a caller that
/// keeps its backends (the Python layer) hands them to a session without giving them up.
struct session_backend {
  std::shared_ptr<backend> b;
  backend_ref ref;
};

/// Runs cases, and makes the backends they run on.
class case_executor {
 public:
  virtual ~case_executor() = default;
  /// The backend `ref`. In a worker: made there first (a plugin's constructors and metadata
  /// functions never run in this process before a worker survived them), and known here by
  /// its identity alone unless `here` (timing needs the backend in this process too).
  virtual std::unique_ptr<backend> make(const backend_ref& ref, bool here = false) = 0;
  virtual case_result run(const located_problem& lp, const session_backend& sb, const run_options& o) = 0;
};

/// `--isolation`: "process" (a worker process with the per-case time limit from
/// `timeout_seconds`, opval/isolation.hpp) or "none" (this process, unprotected); another name
/// is an opval::error.
std::unique_ptr<case_executor> make_executor(const std::string& isolation, double timeout_seconds);

/// How the CLI names a backend: a plugin when the text is a path (ends in .so or holds a '/'),
/// else a registered backend.
backend_ref backend_ref_of(const std::string& text);

/// The backends under test, each once, in the order given: `names` (sim when none is given and
/// no plugin), then `plugin`; all made through `executor` before anything runs, so an unknown
/// name or a plugin that fails to load is bad input.
std::vector<session_backend> make_session_backends(const std::vector<std::string>& names, const std::string& plugin,
                                                   case_executor& executor, bool here = false);

/// The backends' names, comma-separated (run_options::backend, for report headers).
std::string names_of(const std::vector<session_backend>& backends);

}  // namespace opval
