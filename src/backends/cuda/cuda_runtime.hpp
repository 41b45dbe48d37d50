#pragma once
// The CUDA runtime side of the `cuda` backend: error checks, and the process-wide
// device_runtime (device 0, one non-blocking stream, a pair of timing events) that both the
// backend and the plugin backend's device path use.
#include <cuda_runtime_api.h>

#include <string>

#include "core/device.hpp"

namespace opval::cuda {

/// Throws opval::error "CUDA: <what> failed: <cudaGetErrorName>: <cudaGetErrorString>" unless e
/// is cudaSuccess.
void check(cudaError_t e, const char* what);

/// The process-wide CUDA runtime (created on first use, never torn down: destroying CUDA
/// objects during static destruction races the driver's own shutdown).
device_runtime& runtime();

/// The stream runtime().stream() returns, typed.
cudaStream_t stream();

/// "CUDA runtime 13.0, driver 13.0": the versions as the runtime reports them.
std::string runtime_versions();

}  // namespace opval::cuda
