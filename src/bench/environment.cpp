#include "bench/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "core/cpu_features.hpp"
#include "opval/build_info.hpp"

extern char** environ;

namespace opval {
namespace {

namespace fs = std::filesystem;

/// The first line of a file, or "" when it cannot be read.
std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::uint64_t size_in_bytes(const std::string& text) {
  std::uint64_t value = 0;
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') value = value * 10 + static_cast<std::uint64_t>(text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) value <<= 20;
  return value;
}

}  // namespace

std::vector<cache_info> cpu0_caches() {
  std::vector<cache_info> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    if (!entry.path().filename().string().starts_with("index")) continue;
    cache_info c;
    c.level = std::atoi(first_line(entry.path() / "level").c_str());
    c.type = first_line(entry.path() / "type");
    c.bytes = size_in_bytes(first_line(entry.path() / "size"));
    c.shared_cpus = first_line(entry.path() / "shared_cpu_list");
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const cache_info& a, const cache_info& b) {
    return std::tie(a.level, a.type) < std::tie(b.level, b.type);
  });
  return out;
}

namespace {

std::string boost_state() {
  if (const std::string b = first_line("/sys/devices/system/cpu/cpufreq/boost"); !b.empty()) return b == "1" ? "on" : "off";
  if (const std::string t = first_line("/sys/devices/system/cpu/intel_pstate/no_turbo"); !t.empty()) return t == "1" ? "off" : "on";
  return "not readable";
}

std::string os_name() {
  std::ifstream in("/etc/os-release");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("PRETTY_NAME=")) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  return "unknown";
}

/// The variables that steer threads, affinity and library dispatch, when set.
std::map<std::string, std::string> steering_variables() {
  static const std::vector<std::string> prefixes = {"OMP_", "KMP_", "GOMP_", "OPENBLAS_", "MKL_", "DNNL_", "ONEDNN_",
                                                    "CUDA_", "OPVAL_", "XLA_"};
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return name.starts_with(p); }))
      out[name] = entry.substr(eq + 1);
  }
  return out;
}

constexpr const char* other_load = "other load on the machine";

void add_warnings(environment& e, double busy_cpus) {
  if (!e.governor.empty() && e.governor != "not readable" && e.governor != "performance")
    e.warnings.push_back(fmt::format("frequency scaling is on (governor '{}'): figures depend on the clock the CPU chose", e.governor));
  if (e.boost == "on") e.warnings.push_back("turbo boost is on: figures depend on temperature and on the other cores' load");
#ifndef NDEBUG
  e.warnings.push_back("a debug build (assertions on): not the code users run");
#endif
#if defined(__SANITIZE_ADDRESS__)
  e.warnings.push_back("a sanitizer build (AddressSanitizer): every memory access is instrumented");
#endif
  if (e.build_type == "Debug") e.warnings.push_back("CMAKE_BUILD_TYPE is Debug");
  if (e.load_average >= 0 && e.logical_cpus > 0 && e.load_average - busy_cpus > 0.5)
    e.warnings.push_back(fmt::format("{}: load average {:.2f} on {} CPUs (this run accounts for {:g})", other_load,
                                     e.load_average, e.logical_cpus, busy_cpus));
}

}  // namespace

bool is_load_warning(const std::string& warning) { return warning.starts_with(other_load); }

double current_cpu_mhz() {
  std::ifstream cur("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
  if (double khz = 0; cur >> khz && khz > 0) return khz / 1000;
  return std::atof(cpuinfo_value("cpu MHz").c_str());
}

environment capture_environment(double busy_cpus) {
  environment e;
  e.cpu_model = cpuinfo_value("model name");
  if (e.cpu_model.empty()) e.cpu_model = cpuinfo_value("Model");  // some ARM kernels
  e.cpu_flags = cpu_vector_flags();
  e.logical_cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  e.cpu_mhz = current_cpu_mhz();
  e.caches = cpu0_caches();
  e.governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  if (e.governor.empty()) e.governor = "not readable";
  e.boost = boost_state();
  e.memory_bytes = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  e.os = os_name();
  if (utsname u{}; ::uname(&u) == 0) e.kernel = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  if (const std::string load = first_line("/proc/loadavg"); !load.empty()) e.load_average = std::atof(load.c_str());
  e.opval_version = build::version;
  e.git_sha = build::git_sha;
  e.build_type = build::build_type;
  e.compiler = build::compiler;
  e.cxx_flags = build::cxx_flags;
  e.variables = steering_variables();
  add_warnings(e, busy_cpus);
  return e;
}

}  // namespace opval
