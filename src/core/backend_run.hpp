#pragma once
// One run of a backend as the runner makes it: prepare, execute and synchronize, timed, with
// the heap use of each part (core/heap_stats.hpp); and the repeated runs of the leak check.
#include <optional>
#include <span>

#include "opval/backend.hpp"
#include "opval/runner.hpp"

namespace opval {

/// Stage times of one backend run, in seconds.
struct backend_run_times {
  double prepare = 0;                  ///< set-up before the computation
  double kernel = 0;                   ///< execute + synchronize, host wall time
  std::optional<double> device_kernel; ///< the device's own measure of the kernel
  run_memory memory;                   ///< heap use of prepare and of the kernel, RSS change
};

/// prepare, execute and synchronize p on b, timing each part.
execution_info run_backend(backend& b, const problem& p, std::span<const tensor> in, std::span<tensor> out,
                           backend_run_times* times = nullptr);

/// Runs prepare, execute and synchronize `runs` more times on the same tensors and judges
/// the live heap's growth across them (judge_leaks). Run after a first run, so that caches
/// filled by the first call (primitive caches, program caches, thread pools) are not leaks.
leak_check check_leaks(backend& b, const problem& p, std::span<const tensor> in, std::span<tensor> out, int runs);

}  // namespace opval
