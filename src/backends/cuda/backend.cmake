# The CUDA backend (matmul on cuBLASLt, conv2d on cuDNN 9) and the CUDA device runtime that
# the plugin backend uses for plugins that want device tensors (registered with libopval's
# device registry when the module loads). Built as the module libopval_backend_cuda.so when
# CMake finds the CUDA toolkit and OPVAL_CUDA is ON. All of it is host C++ calling the CUDA
# runtime and libraries, so it needs no CUDA compiler; nvcc is used only for the
# example kernel plugins (examples/plugins/cuda_*.cu), built for CMAKE_CUDA_ARCHITECTURES.
# OPVAL_HAVE_CUDA is public so that tests know the cuda backend is in this build.
option(OPVAL_CUDA "Build the cuda backend when the CUDA toolkit is found" ON)
option(OPVAL_CUDNN "Build cuDNN conv2d into the cuda backend when cuDNN is found" ON)

if(OPVAL_CUDA)
  find_package(CUDAToolkit QUIET)
endif()
file(GLOB OPVAL_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
opval_optional_backend(cuda OPTION OPVAL_CUDA FOUND ${CUDAToolkit_FOUND} PUBLIC_HAVE
  WHAT "CUDA ${CUDAToolkit_VERSION}"
  MISSING "CUDA toolkit not found"
  SOURCES ${OPVAL_CUDA_SOURCES}
  LIBRARIES CUDA::cudart CUDA::cublasLt)

set(OPVAL_CUDA_PLUGINS OFF)
if(OPVAL_CUDA_ENABLED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures of the example kernel plugins")
  endif()
  if(OPVAL_CUDNN)
    find_path(OPVAL_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    find_library(OPVAL_CUDNN_LIBRARY NAMES cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
  endif()
  if(OPVAL_CUDNN AND OPVAL_CUDNN_INCLUDE_DIR AND OPVAL_CUDNN_LIBRARY)
    target_include_directories(${OPVAL_CUDA_TARGET} PRIVATE ${OPVAL_CUDNN_INCLUDE_DIR})
    target_link_libraries(${OPVAL_CUDA_TARGET} PRIVATE ${OPVAL_CUDNN_LIBRARY})
    target_compile_definitions(${OPVAL_CUDA_TARGET} PRIVATE OPVAL_HAVE_CUDNN=1)
    message(STATUS "opval: cuda backend with cuDNN (${OPVAL_CUDNN_LIBRARY})")
  else()
    message(STATUS "opval: cuda backend without cuDNN (conv2d UNIMPLEMENTED)")
  endif()
  # The example CUDA kernel plugins need nvcc (examples/plugins enables CUDA for them).
  if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  if(CMAKE_CUDA_COMPILER)
    set(OPVAL_CUDA_PLUGINS ON)
  endif()
endif()
