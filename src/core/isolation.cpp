// The runner's side of process isolation: starts the worker with posix_spawn, sends it one
// case at a time and reads its answer under a deadline. End of file on the answer pipe means
// the worker died: its wait status becomes the CRASH reason. No answer in time: the worker is
// killed (SIGKILL) and the case is a TIMEOUT. Either way the next case gets a fresh worker.
#include "core/isolation.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/backend_modules.hpp"
#include "core/install_dirs.hpp"
#include "core/valgrind_client.hpp"
#include "core/worker_protocol.hpp"
#include "opval/error.hpp"
#include "opval/judge.hpp"
#include "opval/log.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

extern char** environ;

namespace opval {

case_result unfinished_case(const located_problem& lp, const backend& b, const run_options& o, state st,
                            std::string reason, const backend_ref& made_from) {
  case_result r;
  static_cast<case_identity&>(r) = identify(lp.prob, b.name(), o, lp.source, made_from);
  r.backend_version = b.version();
  r.v.st = st;
  r.v.reason = std::move(reason);
  r.v.policy = o.pol.to_string();
  r.repro = render_repro(r);
  return r;
}

case_result run_case_caught(const located_problem& lp, backend& b, const run_options& o,
                            const backend_ref& made_from) {
  try {
    return run_case(lp.prob, b, o, lp.source, made_from);
  } catch (const std::exception& e) {
    return unfinished_case(lp, b, o, state::failed, std::string("exception: ") + e.what(), made_from);
  }
}

double case_time_limit(const problem& p, const isolation_options& o) {
  double gflops = 0;
  try {
    gflops = p.spec().counts(p).flops / 1e9;
  } catch (const std::exception&) {
    // No count: the base limit alone.
  }
  return o.timeout_seconds + o.seconds_per_gflop * gflops;
}

namespace {

using steady = std::chrono::steady_clock;

/// "SIGSEGV (Segmentation fault)".
std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* descr = sigdescr_np(sig);
  return fmt::format("{} ({})", abbrev ? "SIG" + std::string(abbrev) : fmt::format("signal {}", sig),
                     descr ? descr : "unknown signal");
}

/// Why a worker that stopped answering is gone, from its wait status; `during` says when
/// an exit happened.
std::string exit_text(int status, std::string_view during = "during the case") {
  if (WIFSIGNALED(status)) return "worker killed by " + signal_text(WTERMSIG(status));
  if (WIFEXITED(status)) return fmt::format("worker exited with status {} {}", WEXITSTATUS(status), during);
  return "worker stopped answering";
}

// A write to a dead worker's pipe raises SIGPIPE, whose default action ends the process. The
// library leaves the process's disposition alone: SIGPIPE is blocked in this thread for the
// write, and one the write raised is consumed before it is unblocked.
class sigpipe_held {
 public:
  sigpipe_held() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~sigpipe_held() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{};
      while (sigtimedwait(&pipe_, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  sigpipe_held(const sigpipe_held&) = delete;
  sigpipe_held& operator=(const sigpipe_held&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

/// The time `seconds` from now.
steady::time_point deadline_after(double seconds) {
  return steady::now() + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(seconds));
}

/// The notes a worker sent before it stopped answering, as one text ("" for none).
std::string joined(const std::vector<std::string>& notes) { return fmt::format("{}", fmt::join(notes, "; ")); }

/// `text`, then the worker's notes after "; " when it sent any.
std::string with_notes(std::string text, const std::vector<std::string>& notes) {
  return notes.empty() ? text : text + "; " + joined(notes);
}

/// The reason of a request the worker did not answer in time: `what` it owed.
std::string time_limit_text(std::string_view what, double limit) {
  return fmt::format("no {} within the time limit of {:g} s: worker killed with SIGKILL", what, limit);
}

/// The record an answer line holds; a line that is not one is a failure `unfinished` makes.
template <class Unfinished>
case_result record_from(const std::string& line, Unfinished unfinished) {
  try {
    return from_json_line(line);
  } catch (const std::exception& e) {
    return unfinished(state::failed, std::string("unreadable answer from the worker: ") + e.what());
  }
}

void write_all(int fd, std::string_view text) {
  const sigpipe_held held;
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a dead worker (EPIPE): the read that follows sees end of file
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

/// A running worker: its pid, the pipe it reads cases from and the pipe it answers on.
struct case_worker::process {
  pid_t pid = 0;
  int to_worker = -1;
  int from_worker = -1;
  std::string buffered;  ///< answer bytes read past the last complete line

  enum class read_status { line, eof, timeout };

  ~process() {
    if (to_worker >= 0) ::close(to_worker);
    if (from_worker >= 0) ::close(from_worker);
  }

  /// Reads one answer line into `line` before `deadline`.
  read_status read_line(std::string& line, steady::time_point deadline) {
    for (;;) {
      if (std::size_t nl = buffered.find('\n'); nl != std::string::npos) {
        line = buffered.substr(0, nl);
        buffered.erase(0, nl + 1);
        return read_status::line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
      if (left <= 0) return read_status::timeout;
      pollfd pfd{from_worker, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;  // the deadline check above decides
      char chunk[65536];
      const ssize_t n = ::read(from_worker, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return read_status::eof;
      buffered.append(chunk, static_cast<std::size_t>(n));
    }
  }

  /// Waits for the worker to exit, killing it when it lingers (it closed its answer pipe but
  /// kept running) for 2 s, or 60 s under valgrind, whose leak search runs at the worker's
  /// exit; returns its wait status.
  int reap(bool kill_first) {
    if (kill_first) ::kill(pid, SIGKILL);
    const int patience = detail::under_valgrind() ? 6000 : 200;  // polls 10 ms apart
    int status = 0;
    for (int tries = 0;; ++tries) {
      const pid_t done = ::waitpid(pid, &status, tries < patience ? WNOHANG : 0);
      if (done == pid || (done < 0 && errno != EINTR)) break;
      if (tries == patience - 1) ::kill(pid, SIGKILL);
      ::usleep(10000);
    }
    pid = 0;
    return status;
  }
};

case_worker::case_worker(isolation_options o) : opts_(std::move(o)) {}

case_worker::~case_worker() {
  if (!proc_ || proc_->pid == 0) return;
  // End of file on its input makes the worker exit.
  ::close(proc_->to_worker);
  proc_->to_worker = -1;
  proc_->reap(false);
}

pid_t case_worker::pid() const { return proc_ ? proc_->pid : 0; }

namespace {

/// The program to start as the worker. Under valgrind, /proc/self/exe is valgrind's tool,
/// not opval: the path valgrind reports for it (it answers readlink for its client) is what
/// --trace-children follows into the worker.
std::string worker_path(const std::string& exe) {
  if (exe != "/proc/self/exe" || !detail::under_valgrind()) return exe;
  std::error_code ec;
  const std::filesystem::path client = std::filesystem::read_symlink(exe, ec);
  return ec ? exe : client.string();
}

/// Spawns `exe __worker <our pid>` with stdin and stdout on two new pipes (close-on-exec at
/// our end, so no later worker inherits them and hides the end of file of a dead one).
void spawn_worker(const std::string& exe, pid_t& pid, int& to_worker, int& from_worker) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw error(std::string("cannot create a pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    throw error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const std::string parent = std::to_string(::getpid());
  const std::string path = worker_path(exe);
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>(worker_argument),
                  const_cast<char*>(parent.c_str()), nullptr};
  const int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]), ::close(out[0]);
    throw error("cannot start the worker process '" + exe + "': " + std::strerror(rc));
  }
  to_worker = in[1];
  from_worker = out[0];
}

}  // namespace

void case_worker::start_if_needed() {
  if (proc_ && proc_->pid != 0) return;
  // Never this program by default: a host that does not handle `__worker` would rerun itself.
  if (opts_.worker_executable.empty())
    throw error(fmt::format("no opval-worker found beside libopval ({}) or in its bin/: install it there, or set "
                            "OPVAL_WORKER to the worker program, or run with --isolation none",
                            detail::library_dir().string()));
  proc_ = std::make_unique<process>();
  spawn_worker(opts_.worker_executable, proc_->pid, proc_->to_worker, proc_->from_worker);
  log(log_level::debug, fmt::format("started worker process {} ({})", proc_->pid, opts_.worker_executable));
}

/// What came back for one request: the answer line after `prefix`, or (none) the notes the
/// worker sent before it died or was killed, its wait status, and whether the deadline passed.
/// A worker that gave no answer is reaped and forgotten: the next request starts a new one.
case_worker::answer case_worker::await_answer(std::string_view prefix, steady::time_point deadline) {
  answer a;
  for (std::string line;;) {
    const process::read_status st = proc_->read_line(line, deadline);
    if (st == process::read_status::line && line.starts_with(prefix)) {
      a.line = line.substr(prefix.size());
      return a;
    }
    if (st == process::read_status::line) {
      if (line.starts_with(detail::note_prefix)) a.notes.push_back(line.substr(detail::note_prefix.size()));
      continue;
    }
    a.timed_out = st == process::read_status::timeout;
    a.status = proc_->reap(a.timed_out);
    proc_.reset();
    return a;
  }
}

std::string default_worker_executable() {
  if (const char* exe = std::getenv("OPVAL_WORKER"); exe && *exe) return exe;
  if (const std::filesystem::path lib = detail::library_dir(); !lib.empty())
    for (const auto& candidate : {lib / "opval-worker", lib / "bin" / "opval-worker", lib.parent_path() / "bin" / "opval-worker",
                                  lib.parent_path() / "libexec" / "opval" / "opval-worker"})
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  return {};
}

namespace {

/// An error the worker reported before it exited ("worker error: ..." note: bad input, such
/// as a file it could not read), thrown here as the one line it is.
/// How an error names a backend a worker makes.
std::string backend_text(const backend_ref& ref) {
  return ref.plugin_path.empty() ? "backend '" + ref.name + "'" : "plugin '" + ref.plugin_path + "'";
}

void throw_worker_error(const std::string& notes) {
  constexpr std::string_view prefix = "worker error: ";
  if (notes.starts_with(prefix)) throw error(notes.substr(prefix.size()));
}

}  // namespace

backend_identity case_worker::describe(const backend_ref& ref) {
  const std::string what = backend_text(ref);
  start_if_needed();
  const auto deadline = deadline_after(opts_.timeout_seconds);
  write_all(proc_->to_worker, detail::describe_line(ref) + "\n");
  const answer a = await_answer(detail::identity_prefix, deadline);
  if (a.line) return detail::parse_identity(*a.line);
  if (a.timed_out)
    throw error(fmt::format("{} did not finish loading within {:g} s (--timeout): its worker was killed", what,
                            opts_.timeout_seconds));
  const std::string notes = joined(a.notes);
  throw_worker_error(notes);
  throw error(fmt::format("{} could not be loaded: {}{}", what, exit_text(a.status, "while loading it"),
                          notes.empty() ? "" : " (" + notes + ")"));
}

case_result case_worker::judge(const problem& p, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs, const run_options& o) {
  start_if_needed();
  const auto start = steady::now();
  const double limit = case_time_limit(p, opts_);
  write_all(proc_->to_worker, detail::judge_request_line(p, inputs, outputs, o) + "\n");
  const answer a = await_answer(detail::result_prefix, deadline_after(limit));
  auto unfinished = [&](state st, std::string reason) {
    case_result r = unfinished_judgement(p, inputs, outputs, o, st, std::move(reason));
    r.times.total = std::chrono::duration<double>(steady::now() - start).count();
    return r;
  };
  if (a.line) return record_from(*a.line, unfinished);
  throw_worker_error(joined(a.notes));
  if (a.timed_out) return unfinished(state::timeout, time_limit_text("judgement", limit));
  return unfinished(state::crash, with_notes(exit_text(a.status), a.notes) + " while judging");
}

support case_worker::supports(const backend_ref& ref, const problem& p) {
  start_if_needed();
  write_all(proc_->to_worker, detail::supports_request_line(ref, p) + "\n");
  const answer a = await_answer(detail::support_prefix, deadline_after(opts_.timeout_seconds));
  if (a.line) return detail::parse_support(*a.line);
  const std::string notes = joined(a.notes);
  throw_worker_error(notes);
  const std::string how = a.timed_out ? fmt::format("its worker hung past {:g} s (--timeout)", opts_.timeout_seconds)
                                      : exit_text(a.status, "while answering");
  throw error(fmt::format("{} in supports() on `{}`: {}{}", backend_text(ref), p.to_string(), how,
                          notes.empty() ? "" : " (" + notes + ")"));
}

backend_catalog case_worker::catalog() {
  // A module that crashes or hangs its worker while loading is listed as unavailable and
  // skipped by the next worker: the others are still listed.
  std::map<std::string, std::string> skip;
  for (;;) {
    start_if_needed();
    const auto deadline = deadline_after(opts_.timeout_seconds);
    write_all(proc_->to_worker, detail::catalog_request_line(skip) + "\n");
    const answer a = await_answer(detail::catalog_prefix, deadline);
    if (a.line) return detail::parse_catalog(*a.line);
    const std::string what = a.timed_out ? fmt::format("hung past {:g} s (--timeout) while loading", opts_.timeout_seconds)
                                         : exit_text(a.status, "while loading it");
    // The module being loaded is the last one the worker named.
    const auto loading = std::find_if(a.notes.rbegin(), a.notes.rend(),
                                      [](const std::string& n) { return n.starts_with(detail::loading_note); });
    const std::string file = loading == a.notes.rend() ? "" : loading->substr(detail::loading_note.size());
    const std::string name = detail::module_name_of(file);
    if (name.empty() || skip.count(name))
      throw error(fmt::format("the backend modules could not be loaded: {}", what));
    skip[name] = fmt::format("{} took down its worker: {}", file, what);
  }
}

namespace {

// What this process knows of a backend made in a worker.
class remote final : public backend {
 public:
  explicit remote(backend_identity id) : id_(std::move(id)) {}
  std::string name() const override { return id_.name; }
  std::string version() const override { return id_.version; }
  support supports(const problem&) const override { throw error(runs_in_worker()); }
  execution_info execute(const problem&, std::span<const tensor>, std::span<tensor>) override {
    throw error(runs_in_worker());
  }

 private:
  std::string runs_in_worker() const { return "backend " + id_.name + " runs in its worker process only"; }
  backend_identity id_;
};

}  // namespace

std::unique_ptr<backend> remote_backend(backend_identity id) { return std::make_unique<remote>(std::move(id)); }

case_result case_worker::run(const located_problem& lp, const backend_ref& ref, const backend& b,
                             const run_options& o) {
  start_if_needed();
  const auto start = steady::now();
  const double limit = case_time_limit(lp.prob, opts_);
  write_all(proc_->to_worker, detail::request_line(lp, ref, o) + "\n");
  const answer a = await_answer(detail::result_prefix, deadline_after(limit));
  auto unfinished = [&](state st, std::string reason) { return unfinished_case(lp, b, o, st, std::move(reason), ref); };
  if (a.line) return record_from(*a.line, unfinished);
  const std::string where = fmt::format(" while running '{}' on {}", lp.prob.to_string(), b.name());
  case_result r = a.timed_out ? unfinished(state::timeout, time_limit_text("result", limit) + where)
                              : unfinished(state::crash, with_notes(exit_text(a.status), a.notes) + where);
  r.times.total = std::chrono::duration<double>(steady::now() - start).count();
  log(log_level::info, fmt::format("lost the worker process ({}): {}; the next case starts a new one",
                                   to_string(r.v.st), r.v.reason));
  return r;
}

}  // namespace opval
