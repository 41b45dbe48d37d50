#include "bench/hardware_counters.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "core/threading.hpp"

namespace opval {
namespace {

/// What perf_event_open's refusal means, for the one-line reason.
std::string refusal(int err) {
  std::string why = std::strerror(err);
  if (err == ENOENT || err == EOPNOTSUPP)
    why += ": this CPU or VM exposes no such counter";
  else if (err == EACCES || err == EPERM) {
    std::ifstream paranoid("/proc/sys/kernel/perf_event_paranoid");
    int level = 0;
    why += paranoid >> level ? fmt::format(" (perf_event_paranoid is {})", level) : std::string(" (a seccomp filter?)");
  } else if (err == ENOSYS) {
    why += ": perf_event_open is not available in this kernel";
  }
  return why;
}

int open_counter(const counter_event& e, pid_t tid, bool exclude_kernel) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = e.type;
  attr.config = e.config;
  attr.disabled = 1;
  attr.inherit = 1;  // threads this one starts while counting
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, tid, -1, -1, 0));
}

void close_all(std::vector<std::vector<int>>& fds) {
  for (auto& per_thread : fds)
    for (int fd : per_thread) ::close(fd);
  fds.clear();
}

void control_all(const std::vector<std::vector<int>>& fds, unsigned long request) {
  for (const auto& per_thread : fds)
    for (int fd : per_thread) ::ioctl(fd, request, 0);
}

}  // namespace

std::vector<counter_event> hardware_events() {
  return {{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
          {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
          {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
          {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES}};
}

std::vector<counter_event> software_events() {
  return {{"task-clock-ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
          {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
          {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
          {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS}};
}

counter_set::counter_set(std::vector<counter_event> events) : events_(std::move(events)) {
  std::vector<pid_t> tids = process_threads();
  if (tids.empty()) tids.push_back(0);  // no /proc: the calling thread
  for (const counter_event& e : events_) {
    fds_.emplace_back();
    for (pid_t tid : tids) {
      // Hardware events count the user's code only; software ones (a context switch, a page
      // fault) happen in the kernel, where an unprivileged user may be refused: then user only.
      const bool hardware = e.type == PERF_TYPE_HARDWARE || e.type == PERF_TYPE_HW_CACHE;
      int fd = open_counter(e, tid, hardware);
      if (fd < 0 && !hardware && (errno == EACCES || errno == EPERM)) fd = open_counter(e, tid, true);
      if (fd >= 0) {
        fds_.back().push_back(fd);
        continue;
      }
      const int err = errno;
      if (err == ESRCH) continue;  // the thread ended meanwhile
      close_all(fds_);
      throw error(fmt::format("perf_event_open({}): {}", e.name, refusal(err)));
    }
  }
}

counter_set::~counter_set() { close_all(fds_); }

void counter_set::start() {
  control_all(fds_, PERF_EVENT_IOC_RESET);
  control_all(fds_, PERF_EVENT_IOC_ENABLE);
}

void counter_set::pause() { control_all(fds_, PERF_EVENT_IOC_DISABLE); }
void counter_set::resume() { control_all(fds_, PERF_EVENT_IOC_ENABLE); }

std::vector<double> counter_set::stop() {
  pause();
  std::vector<double> totals;
  for (const auto& per_thread : fds_) {
    double total = 0;
    for (int fd : per_thread) {
      std::uint64_t value[3] = {0, 0, 0};  // count, time enabled, time running
      if (::read(fd, value, sizeof value) != static_cast<ssize_t>(sizeof value) || value[2] == 0) continue;
      total += static_cast<double>(value[0]) * static_cast<double>(value[1]) / static_cast<double>(value[2]);
    }
    totals.push_back(total);
  }
  return totals;
}

counter_result count_events(const std::function<void()>& kernel, const std::function<void()>& between,
                            std::uint64_t calls) {
  counter_result r;
  r.calls = std::max<std::uint64_t>(calls, 1);
  std::vector<counter_event> events = hardware_events();
  const std::vector<counter_event> software = software_events();
  std::unique_ptr<counter_set> set;
  try {
    events.insert(events.end(), software.begin(), software.end());
    set = std::make_unique<counter_set>(events);
    r.hardware = true;
  } catch (const error& e) {
    r.unavailable = e.what();
    events = software;
    set = std::make_unique<counter_set>(events);  // throws when even these are refused
  }
  set->start();
  for (std::uint64_t i = 0; i < r.calls; ++i) {
    if (between) {
      set->pause();
      between();
      set->resume();
    }
    kernel();
  }
  const std::vector<double> totals = set->stop();
  for (std::size_t i = 0; i < events.size(); ++i)
    r.per_call.emplace_back(events[i].name, totals[i] / static_cast<double>(r.calls));
  if (r.hardware && totals[0] > 0) r.ipc = totals[1] / totals[0];
  return r;
}

}  // namespace opval
