#pragma once
// Process isolation: cases run in a persistent worker process, so that a kernel that crashes,
// exits or hangs costs one CRASH or TIMEOUT verdict instead of the run. The worker is
// opval-worker, installed beside libopval (default_worker_executable), so that a program that
// embeds the library needs nothing of its own; `opval __worker` is the same. Started with posix_spawn —
// never forked from a process whose OpenMP runtime has run, since a child forked after a GNU
// OpenMP region can hang at its next parallel region.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opval/backend.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"
#include "opval/session.hpp"

namespace opval {

/// run_case, with an exception recorded as a FAILED case carrying its message: one broken
/// case cannot hide the results of the others.
/// `made_from` as for run_case.
case_result run_case_caught(const located_problem& lp, backend& b, const run_options& o,
                            const backend_ref& made_from = {});

/// The record of a case that produced no result of its own (it threw, crashed or timed out):
/// the case's identity, state `st` and `reason`, and its repro command.
case_result unfinished_case(const located_problem& lp, const backend& b, const run_options& o, state st,
                            std::string reason, const backend_ref& made_from = {});

/// Who a backend is: its name and version, as a worker process that made it reports them.
struct backend_identity {
  std::string name;
  std::string version;
};

/// The backends a worker process can make: the registered names, and the backend modules that
/// could not be loaded there, by name, with the reason (backend_modules.hpp).
struct backend_catalog {
  std::vector<std::string> names;
  std::map<std::string, std::string> unloadable;
};

/// The worker program: $OPVAL_WORKER when set; else opval-worker beside libopval (the build
/// tree), in its bin/ (the Python wheel), in ../bin/ or ../libexec/opval/ (an install prefix);
/// else empty, and starting a worker is an opval::error saying so (never this very program by
/// default: a host that does not call worker_main on `__worker` would run itself again). The
/// opval CLI, which does, names itself when no opval-worker is installed.
std::string default_worker_executable();

/// Settings of isolated runs.
struct isolation_options {
  /// The program started as worker with the argument `__worker` (worker_main).
  std::string worker_executable = default_worker_executable();
  /// Per-case limit: `timeout_seconds` plus `seconds_per_gflop` per GFLOP of the case's work
  /// (op_spec::counts), so large problems, whose fp64 reference alone takes long, get more.
  double timeout_seconds = default_case_timeout_seconds;
  double seconds_per_gflop = 10;
};

/// The time limit of one case under `o` (see isolation_options).
double case_time_limit(const problem& p, const isolation_options& o);

/// Runs cases one at a time in a worker process, started on first use and replaced after a
/// crash or timeout. A write to a dead worker cannot kill the caller: SIGPIPE is blocked in
/// the writing thread for the write (the process's own SIGPIPE handling is left as it is).
/// Not thread-safe.
class case_worker {
 public:
  explicit case_worker(isolation_options o = {});
  ~case_worker();  ///< closes the worker's input and waits for it to exit
  case_worker(const case_worker&) = delete;
  case_worker& operator=(const case_worker&) = delete;

  /// Runs lp on the backend `ref` in the worker. `b` is the caller's instance of the same
  /// backend, used only to name it in a CRASH or TIMEOUT record.
  case_result run(const located_problem& lp, const backend_ref& ref, const backend& b, const run_options& o);

  /// Makes the backend `ref` in the worker (loading a plugin runs its constructors and metadata
  /// functions there, never in this process) and returns its identity; the worker keeps it
  /// for the cases that follow. A worker that crashes, exits or hangs past the base time limit
  /// while doing so, or reports an error, is an opval::error naming the backend: one line.
  backend_identity describe(const backend_ref& ref);

  /// judge_files(p, inputs, outputs, o) in the worker (reading the files and making the
  /// alternative reference there). A worker that crashes or hangs gives a CRASH or TIMEOUT
  /// record of the judgement; an error it reports (a file that cannot be read or bound) is
  /// thrown as opval::error, as judge_files throws it.
  case_result judge(const problem& p, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                    const run_options& o);

  /// The backend `ref`'s supports(p), asked in the worker. A worker that crashes or hangs past
  /// the base time limit there is an opval::error naming the backend and the problem.
  support supports(const backend_ref& ref, const problem& p);

  /// The backends the worker can make (loading the backend modules there, not here); an
  /// opval::error, one line, when the worker dies or hangs while loading them.
  backend_catalog catalog();

  /// The worker's process id (0 when none is running), for tests.
  pid_t pid() const;

 private:
  struct process;
  struct answer {
    std::optional<std::string> line;
    std::vector<std::string> notes;
    bool timed_out = false;
    int status = 0;
  };
  void start_if_needed();
  answer await_answer(std::string_view prefix, std::chrono::steady_clock::time_point deadline);
  isolation_options opts_;
  std::unique_ptr<process> proc_;
};

/// A backend made in a worker process, as this process knows it: its identity, for records
/// and reports. It runs nothing here (supports and execute throw opval::error): cases go to the
/// worker. See case_worker::describe.
std::unique_ptr<backend> remote_backend(backend_identity id);

/// The first argument that starts the opval executable as a worker (hidden from --help).
inline constexpr const char* worker_argument = "__worker";

/// The worker's main loop: reads one case per line on stdin, runs it, answers one line per
/// case on its original stdout (stdout itself is sent to stderr so kernels' prints cannot
/// corrupt the answers). Returns the process exit code.
int worker_main(int argc, char** argv);

}  // namespace opval
