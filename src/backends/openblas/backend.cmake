# The OpenBLAS backend (sgemm/dgemm as matmul through the BLAS backends' shared
# src/backends/common_blas/), built as its module libopval_backend_openblas.so only when
# OpenBLAS and its cblas.h are found; otherwise opval builds without it.
option(OPVAL_OPENBLAS "Build the openblas backend when OpenBLAS is found" ON)
find_path(OPVAL_OPENBLAS_INCLUDE_DIR cblas.h
  HINTS /usr/include/x86_64-linux-gnu /usr/include
  PATH_SUFFIXES openblas-pthread openblas)
find_library(OPVAL_OPENBLAS_LIBRARY NAMES openblas)
set(OPVAL_OPENBLAS_FOUND OFF)
if(OPVAL_OPENBLAS_INCLUDE_DIR AND OPVAL_OPENBLAS_LIBRARY)
  set(OPVAL_OPENBLAS_FOUND ON)
endif()
opval_optional_backend(openblas OPTION OPVAL_OPENBLAS FOUND ${OPVAL_OPENBLAS_FOUND}
  WHAT "${OPVAL_OPENBLAS_LIBRARY}"
  MISSING "OpenBLAS not found (cblas.h or libopenblas)"
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/openblas_backend.cpp
  INCLUDE_DIRS ${OPVAL_OPENBLAS_INCLUDE_DIR}
  LIBRARIES ${OPVAL_OPENBLAS_LIBRARY})
