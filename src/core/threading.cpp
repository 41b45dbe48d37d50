#include "core/threading.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <omp.h>

#include "opval/error.hpp"

namespace opval {

omp_threads_scope::omp_threads_scope(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
omp_threads_scope::~omp_threads_scope() { omp_set_num_threads(saved_); }

namespace {

int cpu_number(std::string_view text, std::string_view whole) {
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0 || value >= CPU_SETSIZE)
    throw error(fmt::format("bad CPU '{}' in the CPU list '{}' (expected e.g. 0-3,6)", text, whole));
  return value;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  for (std::size_t from = 0; from <= text.size();) {
    std::size_t to = text.find(',', from);
    if (to == std::string_view::npos) to = text.size();
    const std::string_view part = text.substr(from, to - from);
    const std::size_t dash = part.find('-');
    const int first = cpu_number(part.substr(0, dash), text);
    const int last = dash == std::string_view::npos ? first : cpu_number(part.substr(dash + 1), text);
    if (last < first) throw error(fmt::format("bad range '{}' in the CPU list '{}'", part, text));
    for (int c = first; c <= last; ++c) cpus.push_back(c);
    from = to + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> current_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<pid_t> process_threads() {
  std::vector<pid_t> tids;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec))
    if (const pid_t tid = static_cast<pid_t>(std::atoi(task.path().filename().c_str())); tid > 0) tids.push_back(tid);
  return tids;
}

void pin_process_to(const std::vector<int>& cpus) {
  if (cpus.empty()) throw error("an empty CPU list");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  // Every thread that exists now; the calling thread last, so that the threads it creates
  // afterwards inherit the same set.
  for (const pid_t tid : process_threads()) {
    if (::sched_setaffinity(tid, sizeof set, &set) != 0 && errno != ESRCH)
      throw error(fmt::format("cannot pin to CPUs {}: {}", cpu_list_text(cpus), std::strerror(errno)));
  }
  if (::sched_setaffinity(0, sizeof set, &set) != 0)
    throw error(fmt::format("cannot pin to CPUs {}: {}", cpu_list_text(cpus), std::strerror(errno)));
}

}  // namespace opval
