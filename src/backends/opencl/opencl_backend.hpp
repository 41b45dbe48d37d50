#pragma once
// Test-only entry points of the `opencl` backend (built when OPVAL_HAVE_OPENCL is defined).
#include <string>

// The module's symbols are hidden but this one (cmake/optional_backend.cmake).
#ifndef OPVAL_BACKEND_EXPORT
#define OPVAL_BACKEND_EXPORT
#endif

namespace opval {

/// Builds `source` as an OpenCL C program on the backend's device with its build options and
/// returns the build log; throws opval::error carrying the compiler's log when the build
/// fails, or naming why there is no device.
OPVAL_BACKEND_EXPORT std::string opencl_build_for_test(const std::string& source);

}  // namespace opval
