# The OpenCL backend (matmul, softmax, layer_norm as run-time compiled OpenCL C kernels, f32
# arithmetic on f32 or f16 storage), built as its module libopval_backend_opencl.so only when
# CMake's FindOpenCL finds headers and the ICD loader; otherwise opval builds without it. Which device runs is
# decided at run time (first CPU device, else any), so a machine without a platform still
# builds and reports SKIPPED. OPVAL_HAVE_OPENCL is public: the tests use the test-only hook
# of opencl_backend.hpp.
option(OPVAL_OPENCL "Build the opencl backend when OpenCL is found" ON)
find_package(OpenCL)
opval_optional_backend(opencl OPTION OPVAL_OPENCL FOUND ${OpenCL_FOUND} PUBLIC_HAVE
  WHAT "${OpenCL_LIBRARIES}, headers OpenCL ${OpenCL_VERSION_STRING}"
  MISSING "OpenCL not found (CL/cl.h or libOpenCL)"
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/opencl_backend.cpp
  LIBRARIES OpenCL::OpenCL
  DEFINITIONS CL_TARGET_OPENCL_VERSION=120)
