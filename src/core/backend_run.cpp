// The three-step run of a backend (prepare, execute, synchronize), timed so that a case's
// kernel time excludes primitive creation, kernel builds and uploads.
#include <chrono>

#include "opval/backend.hpp"

namespace opval {

execution_info run_backend(backend& b, const problem& p, std::span<const tensor> in, std::span<tensor> out,
                           backend_run_times* times) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  b.prepare(p, in, out);
  const auto t1 = clock::now();
  execution_info info = b.execute(p, in, out);
  const std::optional<double> device = b.synchronize(out);
  const auto t2 = clock::now();
  if (times) {
    times->prepare += std::chrono::duration<double>(t1 - t0).count();
    times->kernel += std::chrono::duration<double>(t2 - t1).count();
    if (device) times->device_kernel = times->device_kernel.value_or(0) + *device;
  }
  return info;
}

}  // namespace opval
