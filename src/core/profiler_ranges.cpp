// Ranges and the measured region for profilers (docs/PROFILING.md). Three interfaces, each a
// tool's own protocol, so that opval needs none of the tools installed to build or run:
// - NVTX3 (Nsight Systems): header-only; its first call looks for $NVTX_INJECTION64_PATH, which
//   nsys sets, and without it every call is a test of a null pointer;
// - ITT (VTune): Intel's ittnotify client library, linked statically; its first call looks for
//   the collector named by $INTEL_LIBITTNOTIFY64, which vtune sets, and without it a domain's
//   flags stay 0 and every call is a test of them;
// - perf's control protocol: with $OPVAL_PERF_CONTROL (perf's own --control text, fd:CTL[,ACK]
//   or fifo:CTL[,ACK]), "enable" and "disable" are written to perf around the measured region.
#include "core/profiler_ranges.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

#include "opval/log.hpp"

#if OPVAL_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif
#if OPVAL_HAVE_ITT
#include <ittnotify.h>
#endif

namespace opval::detail {
namespace {

constexpr std::array<std::string_view, 7> phase_names{"opval/fill",      "opval/prepare", "opval/kernel",
                                                      "opval/reference", "opval/bound",   "opval/compare",
                                                      "opval/timing"};

std::size_t index_of(phase p) { return static_cast<std::size_t>(p); }

#if OPVAL_HAVE_NVTX
// Registered strings: the cheap form, and the one Nsight Systems matches a capture range
// against by default (--capture-range=nvtx --nvtx-capture=opval/timing).
nvtxStringHandle_t nvtx_name(phase p) {
  static const std::array<nvtxStringHandle_t, phase_names.size()> handles = [] {
    std::array<nvtxStringHandle_t, phase_names.size()> h{};
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = nvtxDomainRegisterStringA(nullptr, phase_names[i].data());
    return h;
  }();
  return handles[index_of(p)];
}

void nvtx_push(nvtxEventAttributes_t a) {
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  nvtxDomainRangePushEx(nullptr, &a);
}
#endif

#if OPVAL_HAVE_ITT
__itt_domain* itt_domain() {
  static __itt_domain* const d = __itt_domain_create("opval");
  return d;
}

__itt_string_handle* itt_name(phase p) {
  static const std::array<__itt_string_handle*, phase_names.size()> handles = [] {
    std::array<__itt_string_handle*, phase_names.size()> h{};
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = __itt_string_handle_create(phase_names[i].data());
    return h;
  }();
  return handles[index_of(p)];
}
#endif

void begin(phase p) {
#if OPVAL_HAVE_NVTX
  nvtxEventAttributes_t a{};
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nvtx_name(p);
  nvtx_push(a);
#endif
#if OPVAL_HAVE_ITT
  __itt_task_begin(itt_domain(), __itt_null, __itt_null, itt_name(p));
#endif
  (void)p;
}

void begin(const std::string& name) {
#if OPVAL_HAVE_NVTX
  nvtxEventAttributes_t a{};
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name.c_str();
  nvtx_push(a);
#endif
#if OPVAL_HAVE_ITT
  // A collector keeps every name it is given; without one, no handle is made.
  if (__itt_domain* d = itt_domain(); d && d->flags)
    __itt_task_begin(d, __itt_null, __itt_null, __itt_string_handle_create(name.c_str()));
#endif
  (void)name;
}

void end() {
#if OPVAL_HAVE_NVTX
  nvtxDomainRangePop(nullptr);
#endif
#if OPVAL_HAVE_ITT
  __itt_task_end(itt_domain());
#endif
}

// perf stat|record --delay=-1 --control=fd:CTL,ACK (or fifo:CTL,ACK) start with the counters
// off and turn them on and off at the "enable" and "disable" commands read from CTL, answering
// "ack\n" on ACK when there is one. The same text in $OPVAL_PERF_CONTROL tells opval where to
// write. Without an answer in 10 s (no perf listening), the control is dropped with a warning
// rather than hanging the run.
class perf_control {
 public:
  static perf_control& instance() {
    static perf_control c(std::getenv("OPVAL_PERF_CONTROL"));
    return c;
  }
  bool active() const { return ctl_ >= 0; }
  void send(std::string_view command) {
    if (!active()) return;
    const std::string line = fmt::format("{}\n", command);
    if (::write(ctl_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return drop(fmt::format("writing '{}' to perf failed: {}", command, std::strerror(errno)));
    if (ack_ >= 0 && !await_ack()) drop(fmt::format("perf did not acknowledge '{}' within 10 s", command));
  }

 private:
  explicit perf_control(const char* text) {
    if (!text || !*text) return;
    const std::string_view t(text);
    const std::size_t colon = t.find(':');
    const std::string_view kind = t.substr(0, colon == t.npos ? 0 : colon);
    const std::string_view rest = colon == t.npos ? t : t.substr(colon + 1);
    const std::size_t comma = rest.find(',');
    const std::string ctl(rest.substr(0, comma)), ack(comma == rest.npos ? "" : rest.substr(comma + 1));
    if (kind == "fd") {
      ctl_ = parse_fd(ctl), ack_ = ack.empty() ? -1 : parse_fd(ack);
    } else if (kind == "fifo") {
      ctl_ = ::open(ctl.c_str(), O_WRONLY | O_CLOEXEC);
      ack_ = ack.empty() ? -1 : ::open(ack.c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (ctl_ < 0 || (!ack.empty() && ack_ < 0))
      drop(fmt::format("OPVAL_PERF_CONTROL='{}' is not fd:CTL[,ACK] or fifo:CTL[,ACK] naming open descriptors or "
                       "fifos ({})", t, std::strerror(errno)));
  }
  static int parse_fd(const std::string& s) {
    char* end = nullptr;
    const long fd = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end || fd < 0 || ::fcntl(static_cast<int>(fd), F_GETFD) < 0) return -1;
    return static_cast<int>(fd);
  }
  bool await_ack() {
    std::string got;
    while (got.find('\n') == got.npos) {
      pollfd pfd{.fd = ack_, .events = POLLIN, .revents = 0};
      if (::poll(&pfd, 1, 10000) <= 0) return false;
      char buf[16];
      const ssize_t n = ::read(ack_, buf, sizeof buf);
      if (n <= 0) return false;
      got.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  void drop(const std::string& why) {
    log(log_level::warning, "perf control off: " + why);
    ctl_ = ack_ = -1;
  }
  int ctl_ = -1, ack_ = -1;
};

// Collection on or off, for every interface that has a notion of it. Nsight Systems has none
// to call: its capture range is the "opval/timing" range itself.
void collect(bool on) {
#if OPVAL_HAVE_ITT
  if (on) __itt_resume();
  else __itt_pause();
#endif
  perf_control::instance().send(on ? "enable" : "disable");
}

// Measured regions open on this thread (the sampler's loop runs on one thread).
thread_local int measured_depth = 0;

}  // namespace

std::string_view range_name(phase p) { return phase_names[index_of(p)]; }

profiler_range::profiler_range(phase p) noexcept { begin(p); }
profiler_range::profiler_range(const std::string& case_name) noexcept { begin(case_name); }
profiler_range::~profiler_range() { end(); }

measured_region::measured_region() {
  if (measured_depth++ == 0) collect(true);
}
measured_region::~measured_region() {
  if (--measured_depth == 0) collect(false);
}

unmeasured_step::unmeasured_step() : paused_(measured_depth > 0) {
  if (paused_) collect(false);
}
unmeasured_step::~unmeasured_step() {
  if (paused_) collect(true);
}

std::string_view profiler_interfaces() {
  return OPVAL_HAVE_NVTX && OPVAL_HAVE_ITT ? "nvtx itt" : OPVAL_HAVE_NVTX ? "nvtx" : OPVAL_HAVE_ITT ? "itt" : "none";
}

}  // namespace opval::detail
