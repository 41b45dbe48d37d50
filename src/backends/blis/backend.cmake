# The BLIS backend (sgemm/dgemm as matmul through BLIS's CBLAS), built as its module
# libopval_backend_blis.so only when BLIS (Debian's libblis-dev: blis.h, cblas.h, libblis) is
# found. Its code is the BLAS backends' shared src/backends/common_blas/; this folder only says
# which library it is.
include(${CMAKE_CURRENT_LIST_DIR}/../common_blas/cblas_backend.cmake)
opval_cblas_backend(blis LIBRARY blis HEADER blis.h
  SUFFIXES blis-openmp blis-pthread blis-serial blis
  MISSING "BLIS not found (blis.h with cblas.h, or libblis)")
