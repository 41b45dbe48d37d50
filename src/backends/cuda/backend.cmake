# The CUDA backend (matmul on cuBLASLt, conv2d on cuDNN 9) and the CUDA device runtime that
# the plugin backend uses for plugins that want device tensors. Compiled into opval_core
# when CMake finds the CUDA toolkit and OPVAL_CUDA is ON. All of it is host C++ calling the
# CUDA runtime and libraries, so opval_core needs no CUDA compiler; nvcc is used only for the
# example kernel plugins (examples/plugins/cuda_*.cu), built for CMAKE_CUDA_ARCHITECTURES.
option(OPVAL_CUDA "Build the cuda backend when the CUDA toolkit is found" ON)
option(OPVAL_CUDNN "Build cuDNN conv2d into the cuda backend when cuDNN is found" ON)

if(OPVAL_CUDA)
  find_package(CUDAToolkit QUIET)
endif()

if(OPVAL_CUDA AND CUDAToolkit_FOUND)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures of the example kernel plugins")
  endif()
  file(GLOB OPVAL_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
  target_sources(opval_core PRIVATE ${OPVAL_CUDA_SOURCES})
  target_link_libraries(opval_core PRIVATE CUDA::cudart CUDA::cublasLt)
  # PUBLIC so that tests know the cuda backend is in this build.
  target_compile_definitions(opval_core PUBLIC OPVAL_HAVE_CUDA=1)
  set(OPVAL_CUDNN_STATUS "without cuDNN (conv2d UNIMPLEMENTED)")
  if(OPVAL_CUDNN)
    find_path(OPVAL_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    find_library(OPVAL_CUDNN_LIBRARY NAMES cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(OPVAL_CUDNN_INCLUDE_DIR AND OPVAL_CUDNN_LIBRARY)
      target_include_directories(opval_core PRIVATE ${OPVAL_CUDNN_INCLUDE_DIR})
      target_link_libraries(opval_core PRIVATE ${OPVAL_CUDNN_LIBRARY})
      target_compile_definitions(opval_core PRIVATE OPVAL_HAVE_CUDNN=1)
      set(OPVAL_CUDNN_STATUS "with cuDNN (${OPVAL_CUDNN_LIBRARY})")
    endif()
  endif()
  # The example CUDA kernel plugins need nvcc (examples/plugins enables CUDA for them).
  if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  set(OPVAL_CUDA_PLUGINS OFF)
  if(CMAKE_CUDA_COMPILER)
    set(OPVAL_CUDA_PLUGINS ON)
  endif()
  message(STATUS "opval: CUDA backend enabled (CUDA ${CUDAToolkit_VERSION}, ${OPVAL_CUDNN_STATUS})")
elseif(OPVAL_CUDA)
  message(STATUS "opval: CUDA toolkit not found, the cuda backend is not built")
else()
  message(STATUS "opval: OPVAL_CUDA=OFF, the cuda backend is not built")
endif()
