#pragma once
// Where and on how many threads kernels run: OpenMP's thread count for a scope, and the CPUs
// the process's threads may run on (docs/BENCHMARKING.md, "Threads and affinity").
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace opval {

/// Sets OpenMP's thread count for the calling thread's next parallel regions, and restores
/// the previous count when the scope ends.
class omp_threads_scope {
 public:
  explicit omp_threads_scope(int n);
  ~omp_threads_scope();
  omp_threads_scope(const omp_threads_scope&) = delete;
  omp_threads_scope& operator=(const omp_threads_scope&) = delete;

 private:
  int saved_;
};

/// The CPUs of a Linux cpulist ("0-3,6"), ascending and without repeats. Throws opval::error
/// naming the bad part.
std::vector<int> parse_cpu_list(std::string_view text);
/// The cpulist text of ascending `cpus`: "0-3,6".
std::string cpu_list_text(const std::vector<int>& cpus);

/// The CPUs the calling thread may run on.
std::vector<int> current_affinity();
/// Restricts every thread of this process, those already running (OpenMP's pool, a library's
/// workers) and those created later, to `cpus`. Throws opval::error when the kernel refuses
/// (a CPU that is offline or outside the process's cpuset).
void pin_process_to(const std::vector<int>& cpus);

/// The thread ids of this process as /proc/self/task lists them now (empty without /proc).
std::vector<pid_t> process_threads();

}  // namespace opval
