# Named ranges for profilers (src/core/profiler_ranges.cpp, docs/PROFILING.md), each interface
# compiled in when found and a no-op at run time without a collector:
# - NVTX3 (Nsight Systems): header-only, from the CUDA toolkit (or any include directory that
#   holds nvtx3/nvToolsExt.h, -DOPVAL_NVTX3_INCLUDE_DIR=...);
# - ITT (VTune): Intel's ittnotify client, a static library built with -fPIC: an install of
#   github.com/intel/ittapi (its CMake package, -Dittapi_DIR=... or CMAKE_PREFIX_PATH) or
#   VTune's own SDK ($VTUNE_PROFILER_DIR/sdk). Neither Debian nor PyPI ships it (PyPI's ittapi
#   wheel holds the Python module only), so a build without it has NVTX ranges only.
option(OPVAL_PROFILER_RANGES "NVTX and ITT ranges around each case and phase, where their headers are found" ON)

set(OPVAL_HAVE_NVTX 0)
set(OPVAL_HAVE_ITT 0)
if(OPVAL_PROFILER_RANGES)
  find_package(CUDAToolkit QUIET)
  find_path(OPVAL_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  if(OPVAL_NVTX3_INCLUDE_DIR)
    set(OPVAL_HAVE_NVTX 1)
    # On this one source only: the CUDA include directory must not reach the rest of libopval.
    set_property(SOURCE src/core/profiler_ranges.cpp APPEND PROPERTY INCLUDE_DIRECTORIES ${OPVAL_NVTX3_INCLUDE_DIR})
  endif()

  find_package(ittapi CONFIG QUIET)
  if(TARGET ittapi::ittnotify)
    set(OPVAL_HAVE_ITT 1)
    target_link_libraries(opval_core PRIVATE ittapi::ittnotify)
    get_target_property(OPVAL_ITT_INCLUDE_DIR ittapi::ittnotify INTERFACE_INCLUDE_DIRECTORIES)
  else()
    find_path(OPVAL_ITT_INCLUDE_DIR ittnotify.h HINTS $ENV{VTUNE_PROFILER_DIR}/sdk/include
              /opt/intel/oneapi/vtune/latest/sdk/include)
    find_library(OPVAL_ITT_LIBRARY libittnotify.a HINTS $ENV{VTUNE_PROFILER_DIR}/sdk/lib64
                 /opt/intel/oneapi/vtune/latest/sdk/lib64)
    if(OPVAL_ITT_INCLUDE_DIR AND OPVAL_ITT_LIBRARY)
      set(OPVAL_HAVE_ITT 1)
      set_property(SOURCE src/core/profiler_ranges.cpp APPEND PROPERTY INCLUDE_DIRECTORIES ${OPVAL_ITT_INCLUDE_DIR})
      target_link_libraries(opval_core PRIVATE ${OPVAL_ITT_LIBRARY})
    endif()
  endif()
endif()
set_property(SOURCE src/core/profiler_ranges.cpp APPEND PROPERTY COMPILE_DEFINITIONS
             OPVAL_HAVE_NVTX=${OPVAL_HAVE_NVTX} OPVAL_HAVE_ITT=${OPVAL_HAVE_ITT})
message(STATUS "opval profiler ranges: NVTX ${OPVAL_HAVE_NVTX}, ITT ${OPVAL_HAVE_ITT}")
