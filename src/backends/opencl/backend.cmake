# The OpenCL backend (matmul, softmax, layer_norm as run-time compiled OpenCL C kernels, f32
# arithmetic on f32 or f16 storage),
# compiled into opval_core only when CMake's FindOpenCL finds headers and the ICD loader;
# otherwise opval builds without it. Which device runs is decided at run time (first CPU
# device, else any), so a machine without a platform still builds and reports SKIPPED.
option(OPVAL_OPENCL "Build the opencl backend when OpenCL is found" ON)
find_package(OpenCL)

if(OPVAL_OPENCL AND OpenCL_FOUND)
  message(STATUS "opval: OpenCL backend enabled (${OpenCL_LIBRARIES}, headers OpenCL ${OpenCL_VERSION_STRING})")
  target_sources(opval_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/opencl_backend.cpp)
  target_link_libraries(opval_core PRIVATE OpenCL::OpenCL)
  target_compile_definitions(opval_core PRIVATE CL_TARGET_OPENCL_VERSION=120)
  # PUBLIC so that tests know the test-only hook of opencl_backend.hpp exists in this build.
  target_compile_definitions(opval_core PUBLIC OPVAL_HAVE_OPENCL=1)
elseif(NOT OPVAL_OPENCL)
  message(STATUS "opval: the opencl backend is switched off (OPVAL_OPENCL=OFF)")
else()
  message(STATUS "opval: OpenCL not found (CL/cl.h or libOpenCL), the opencl backend is not built")
endif()
