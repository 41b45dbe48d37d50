// The worker process of process isolation (core/isolation.hpp): `opval __worker <runner
// pid>`. It keeps its backends (and loaded plugins) from case to case, so a batch of cases
// pays for one process start. A SIGSEGV or SIGBUS is described on the answer pipe before the
// process dies of it: the runner's CRASH reason then names the guard page and the tensor hit.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <fcntl.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "core/backend_modules.hpp"
#include "core/worker_protocol.hpp"
#include "opval/error.hpp"
#include "core/guarded_allocator.hpp"
#include "core/isolation.hpp"
#include "backends/plugin/plugin_backend.hpp"
#include "opval/judge.hpp"
#include "opval/runner.hpp"

namespace opval {
namespace {

int answer_fd = -1;  ///< the runner's answer pipe (the worker's original stdout)

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// ------------------------------------------------------------ the fault handler
// Async-signal-safe throughout: fixed buffers, no allocation, write(2) only.

/// Appends `text` to the NUL-terminated `buf` of `size` bytes.
void append(char* buf, std::size_t size, const char* text) {
  std::size_t at = std::strlen(buf);
  while (*text && at + 1 < size) buf[at++] = *text++;
  buf[at] = '\0';
}

void append_hex(char* buf, std::size_t size, std::uintptr_t value) {
  char digits[2 + 2 * sizeof value + 1] = "0x";
  int n = 0;
  char rev[2 * sizeof value];
  do {
    rev[n++] = "0123456789abcdef"[value & 15];
    value >>= 4;
  } while (value);
  for (int i = 0; i < n; ++i) digits[2 + i] = rev[n - 1 - i];
  digits[2 + n] = '\0';
  append(buf, size, digits);
}

void on_fault(int sig, siginfo_t* info, void*) {
  char line[768] = "N ";
  char guard[512];
  if (describe_guard_fault(info->si_addr, guard, sizeof guard)) {
    append(line, sizeof line, guard);
  } else {
    append(line, sizeof line, "invalid access at address ");
    append_hex(line, sizeof line, reinterpret_cast<std::uintptr_t>(info->si_addr));
    if (reinterpret_cast<std::uintptr_t>(info->si_addr) < 4096) append(line, sizeof line, " (a null pointer)");
  }
  append(line, sizeof line, "\n");
  write_all(answer_fd, line, std::strlen(line));
  // SA_RESETHAND restored the default action: returning re-executes the faulting access,
  // which now ends the process with `sig`. A signal sent by kill() or raise() (si_code <= 0)
  // does not come back by itself, so it is sent again.
  if (info->si_code <= 0) ::raise(sig);
}

void install_fault_handler() {
  static char alt_stack[1 << 16];  // the handler must run even when the fault is a stack overflow
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);
}

// ------------------------------------------------------------ the case loop

/// The backend a request names, made on first use and kept for the worker's life.
backend& backend_for(const backend_ref& ref, std::map<std::string, std::unique_ptr<backend>>& made) {
  const std::string key = ref.plugin_path.empty() ? "name:" + ref.name : "plugin:" + ref.plugin_path;
  auto it = made.find(key);
  if (it == made.end())
    it = made.emplace(key, ref.plugin_path.empty() ? make_backend(ref.name) : load_plugin_backend(ref.plugin_path))
             .first;
  return *it->second;
}

/// Makes the alternative reference the options name (kept in `made`: a non-owning pointer).
void attach_reference(run_options& o, std::map<std::string, std::unique_ptr<backend>>& made) {
  if (!o.reference) return;
  backend& b = backend_for(o.reference->ref, made);
  o.reference->impl = std::shared_ptr<backend>(std::shared_ptr<backend>(), &b);
}

/// Sends one answer line: `prefix` (worker_protocol.hpp) and its text.
void send(std::string_view prefix, const std::string& text) {
  const std::string line = std::string(prefix) + text + "\n";
  write_all(answer_fd, line.data(), line.size());
}

void send_note(const std::string& text) { send(detail::note_prefix, text); }

/// Carries out one request and sends its answer; `backends` are those made so far.
class request_handler {
 public:
  explicit request_handler(std::map<std::string, std::unique_ptr<backend>>& backends) : backends_(backends) {}

  void operator()(const detail::describe_request& r) const {
    const backend& b = backend_for(r.ref, backends_);
    send(detail::identity_prefix, detail::identity_line({b.name(), b.version()}));
  }

  void operator()(detail::judge_request& r) const {
    attach_reference(r.opts, backends_);
    send(detail::result_prefix, to_json_line(judge_files(r.prob, r.inputs, r.outputs, r.opts)));
  }

  void operator()(const detail::catalog_request& r) const {
    for (const auto& [name, why] : r.skip) detail::mark_module_unloadable(name, why);
    // Each module named before it loads: if it crashes this worker, the runner knows which.
    detail::load_backend_modules(
        [](const std::filesystem::path& file) { send_note(std::string(detail::loading_note) + file.string()); });
    send(detail::catalog_prefix, detail::catalog_line({backend_names(), detail::unloadable_backend_modules()}));
  }

  void operator()(const detail::supports_request& r) const {
    send(detail::support_prefix, detail::support_line(backend_for(r.ref, backends_).supports(r.prob)));
  }

  void operator()(detail::case_request& r) const {
    backend& b = backend_for(r.ref, backends_);
    attach_reference(r.opts, backends_);
    send(detail::result_prefix, to_json_line(run_case_caught(r.lp, b, r.opts, r.ref)));
  }

 private:
  std::map<std::string, std::unique_ptr<backend>>& backends_;
};

}  // namespace

int worker_main(int argc, char** argv) {
  // Die with the runner: a worker whose runner was killed must not live on in a hung kernel.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (argc >= 3 && std::to_string(::getppid()) != argv[2]) return 1;  // the runner died first
  answer_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (answer_fd < 0) return 1;
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  install_fault_handler();
  std::map<std::string, std::unique_ptr<backend>> backends;
  const request_handler handle(backends);
  for (std::string line; std::getline(std::cin, line);) {
    try {
      detail::worker_request request = detail::parse_worker_request(line);
      std::visit(handle, request);
    } catch (const std::exception& e) {
      // No record can be made without a problem and a backend: the runner records a CRASH
      // carrying this note.
      send_note(std::string("worker error: ") + e.what());
      return 3;
    }
  }
  return 0;
}

}  // namespace opval
