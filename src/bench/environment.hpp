#pragma once
// What a benchmark figure depends on besides the kernel (docs/BENCHMARKING.md): the CPU, its
// caches and frequency policy, memory, OS, the build, the libraries, the environment variables
// that steer threading, and warnings when the figure is suspect (frequency scaling, a debug or
// sanitizer build, other load on the machine). Stored with every `opval bench` result.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opval {

struct cache_info {
  int level = 0;
  std::string type;           ///< Data, Instruction, Unified
  std::uint64_t bytes = 0;
  std::string shared_cpus;    ///< the CPUs sharing it, as sysfs lists them ("0-1")
};

struct environment {
  std::string cpu_model;
  std::vector<std::string> cpu_flags;   ///< the vector and matrix extensions among /proc/cpuinfo's flags
  int logical_cpus = 0;                 ///< online CPUs
  double cpu_mhz = 0;                   ///< as /proc/cpuinfo reports CPU 0 now (0: not readable)
  std::vector<cache_info> caches;
  std::string governor;                 ///< the cpufreq governor, or "not readable"
  std::string boost;                    ///< "on", "off" or "not readable"
  std::uint64_t memory_bytes = 0;
  std::string os, kernel;
  double load_average = -1;             ///< 1-minute load average at capture (-1: not readable)
  std::string opval_version, git_sha, build_type, compiler, cxx_flags;
  std::map<std::string, std::string> libraries;  ///< name -> version (the backends in use)
  std::map<std::string, std::string> variables;  ///< the threading and library variables that are set
  std::vector<std::string> warnings;
};

/// CPU 0's caches as sysfs describes them (/sys/devices/system/cpu/cpu0/cache), by level;
/// empty when not readable.
std::vector<cache_info> cpu0_caches();

/// CPU 0's current clock in MHz (cpufreq's scaling_cur_freq, else /proc/cpuinfo's "cpu
/// MHz"), 0 when neither is readable.
double current_cpu_mhz();

/// Whether `warning` (one of environment::warnings) is the one of other load on the machine.
bool is_load_warning(const std::string& warning);

/// Reads this machine's environment (a few milliseconds: sysfs, /proc, uname). `busy_cpus`
/// is how many CPUs the caller itself keeps busy (1 for a benchmark's own thread), discounted
/// from the load average before it warns of other load.
environment capture_environment(double busy_cpus = 1);

}  // namespace opval
