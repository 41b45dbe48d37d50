# The OpenBLAS backend (sgemm/dgemm as matmul through the BLAS backends' shared
# src/backends/common_blas/), built as its module libopval_backend_openblas.so only when
# OpenBLAS and its cblas.h are found; otherwise opval builds without it.
include(${CMAKE_CURRENT_LIST_DIR}/../common_blas/cblas_backend.cmake)
opval_cblas_backend(openblas LIBRARY openblas HEADER cblas.h
  SUFFIXES openblas-pthread openblas
  MISSING "OpenBLAS not found (cblas.h or libopenblas)")
