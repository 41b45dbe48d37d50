#pragma once
// This machine's peaks (docs/BENCHMARKING.md, "Machine peaks and the roofline"): the fused
// multiply-add throughput per data type and the bandwidth (STREAM's copy and triad) of each
// cache level from L2 outwards and of DRAM, on one thread and on all, measured by
// `opval bench --machine` and cached in a file with the identity of the machine they were
// measured on.
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/environment.hpp"
#include "opval/session.hpp"

namespace opval {

/// One figure on one thread and on all of them.
struct per_threads {
  double one = 0, all = 0;
};

/// One level of the memory hierarchy and STREAM's bandwidths on arrays that fit it (half its
/// capacity over the three arrays); DRAM's arrays are 4 x the last-level cache.
struct memory_level {
  std::string name;                 ///< "L2", "L3", "DRAM"
  std::uint64_t bytes_per_cpu = 0;  ///< its capacity per CPU sharing it; 0 for DRAM (no bound)
  per_threads copy_gbs, triad_gbs;  ///< GB/s, STREAM's byte counts (no write-allocate)
};

struct machine_peaks {
  std::string cpu_model, kernel;
  std::string isa;             ///< the vector instructions the FMA kernels used ("avx512", "avx2", "scalar")
  int logical_cpus = 0;
  int threads = 0;             ///< the threads "all" ran on
  std::string measured_at;     ///< UTC, ISO 8601
  /// GFLOP/s by the type the kernel multiplies in: "f64", "f32", "bf16", "f16", "int8" (GOP/s);
  /// a type the CPU has no instruction for is absent.
  std::map<std::string, per_threads> gflops;
  std::vector<memory_level> levels;  ///< the caches from L2 outwards, then DRAM (always last)
  std::size_t stream_array_bytes = 0;  ///< DRAM's arrays, each
  const memory_level& dram() const { return levels.back(); }
  std::string measured_on() const;  ///< "Intel(R) Xeon(R) Processor, 2 CPUs, Linux 6.1.0 x86_64"
};

struct peak_options {
  double seconds = 0.1;          ///< per FMA run (the best of 3 runs is kept)
  std::size_t array_bytes = 0;   ///< each STREAM array; 0 = 4 x the last-level cache, at least 64 MiB
  int passes = 5;                ///< STREAM passes per kernel (the best is kept, as STREAM does)
  double stream_seconds = 0.02;  ///< a pass repeats the kernel over its arrays at least this long
  int attempts = 3;              ///< measurements in all while the hierarchy check fails
  double tolerance = 0.10;       ///< how far a figure may fall short of the one it must reach
};

/// Measures the peaks (seconds to a minute: the STREAM arrays are 4 x the last-level cache).
machine_peaks measure_machine_peaks(const peak_options& o = {});

/// What makes `p` an impossible machine, one line per figure: each level's copy and triad
/// bandwidth (on one thread, and on all) below the next level's, or any figure on all threads
/// below its one-thread figure, by more than the fraction `tolerance`. Empty when consistent.
/// Such figures come from a loaded machine, and would put results above 100% of their roof.
std::vector<std::string> hierarchy_problems(const machine_peaks& p, double tolerance);

/// Peaks that passed the hierarchy check, or the best figures found and why they did not.
struct checked_peaks {
  machine_peaks peaks;                ///< each figure the best over the attempts
  std::vector<std::string> problems;  ///< hierarchy_problems of `peaks`; empty: trustworthy
  int attempts = 0;                   ///< measurements taken
};

/// Calls `measure` until hierarchy_problems finds nothing, at most o.attempts times. Each
/// figure is the best over the attempts, as STREAM keeps its best pass: load only lowers one.
checked_peaks measure_checked_peaks(const peak_options& o, const std::function<machine_peaks()>& measure);

/// `opval bench --machine` once its first line is out: measures through `measure`, checked as
/// measure_checked_peaks does, prints the figures on `out` and saves them to `file` if they pass;
/// else prints why (the hierarchy's problems, the machine's load) and leaves `file` as it was.
/// Returns whether they were saved.
bool measure_and_save_peaks(const peak_options& o, const std::string& file, std::ostream& out,
                            const std::function<machine_peaks()>& measure);

// default_machine_file(), the cache file's default, is declared in opval/session.hpp.

/// Throws opval::error unless `path` can be written (its folder is created): checked before a
/// measurement that would otherwise be lost.
void check_writable(const std::string& path);

/// Writes `p` to `path` as JSON (creating its folder). Throws opval::error when it cannot.
void save_machine_peaks(const machine_peaks& p, const std::string& path);

/// The peaks in `path` when they were measured on this machine (same CPU model, CPU count and
/// kernel as `here`) and pass the hierarchy check; nullopt with `why` set when the file is
/// missing, unreadable, another machine's or an impossible hierarchy (a file saved before the
/// check existed, on a loaded machine).
std::optional<machine_peaks> load_machine_peaks(const std::string& path, const environment& here, std::string& why);

}  // namespace opval
