# The OpenBLAS backend (sgemm/dgemm as matmul), compiled into opval_core only when OpenBLAS
# and its cblas.h are found; otherwise opval builds without it.
option(OPVAL_OPENBLAS "Build the openblas backend when OpenBLAS is found" ON)
find_path(OPVAL_OPENBLAS_INCLUDE_DIR cblas.h
  HINTS /usr/include/x86_64-linux-gnu /usr/include
  PATH_SUFFIXES openblas-pthread openblas)
find_library(OPVAL_OPENBLAS_LIBRARY NAMES openblas)

if(OPVAL_OPENBLAS AND OPVAL_OPENBLAS_INCLUDE_DIR AND OPVAL_OPENBLAS_LIBRARY)
  message(STATUS "opval: OpenBLAS backend enabled (${OPVAL_OPENBLAS_LIBRARY})")
  target_sources(opval_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/openblas_backend.cpp)
  target_include_directories(opval_core PRIVATE ${OPVAL_OPENBLAS_INCLUDE_DIR})
  target_link_libraries(opval_core PRIVATE ${OPVAL_OPENBLAS_LIBRARY})
  target_compile_definitions(opval_core PRIVATE OPVAL_HAVE_OPENBLAS=1)
elseif(NOT OPVAL_OPENBLAS)
  message(STATUS "opval: the openblas backend is switched off (OPVAL_OPENBLAS=OFF)")
else()
  message(STATUS "opval: OpenBLAS not found (cblas.h or libopenblas), the openblas backend is not built")
endif()
