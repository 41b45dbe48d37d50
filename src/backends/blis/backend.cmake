# The BLIS backend (sgemm/dgemm as matmul through BLIS's CBLAS), built as its module
# libopval_backend_blis.so only when BLIS (Debian's libblis-dev: blis.h, cblas.h, libblis) is
# found. Its code is the BLAS backends' shared src/backends/common_blas/; this folder only says
# which library it is.
option(OPVAL_BLIS "Build the blis backend when BLIS is found" ON)
find_path(OPVAL_BLIS_INCLUDE_DIR blis.h
  HINTS /usr/include/x86_64-linux-gnu /usr/include
  PATH_SUFFIXES blis-openmp blis-pthread blis-serial blis)
find_library(OPVAL_BLIS_LIBRARY NAMES blis)
set(OPVAL_BLIS_FOUND OFF)
if(OPVAL_BLIS_INCLUDE_DIR AND OPVAL_BLIS_LIBRARY AND EXISTS ${OPVAL_BLIS_INCLUDE_DIR}/cblas.h)
  set(OPVAL_BLIS_FOUND ON)
endif()
opval_optional_backend(blis OPTION OPVAL_BLIS FOUND ${OPVAL_BLIS_FOUND}
  WHAT "${OPVAL_BLIS_LIBRARY}"
  MISSING "BLIS not found (blis.h with cblas.h, or libblis)"
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/blis_backend.cpp
  INCLUDE_DIRS ${OPVAL_BLIS_INCLUDE_DIR}
  LIBRARIES ${OPVAL_BLIS_LIBRARY})
