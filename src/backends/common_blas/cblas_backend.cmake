# opval_cblas_backend(<name> LIBRARY <lib> HEADER <header> SUFFIXES <dir>... MISSING <text>)
#
# One BLAS backend through its library's CBLAS (src/backends/common_blas/): finds <header>
# (searched under the include directories' <dir> suffixes, with cblas.h beside it) and lib<lib>,
# and builds the module from <name>/<name>_backend.cpp when both are found and the switch
# OPVAL_<NAME> (ON by default) is on. Leaves OPVAL_<NAME>_INCLUDE_DIR and OPVAL_<NAME>_LIBRARY
# in the cache, where the benchmarks find them too.
include_guard(GLOBAL)

function(opval_cblas_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LIBRARY;HEADER;MISSING" "SUFFIXES")
  string(TOUPPER "${name}" upper)
  option(OPVAL_${upper} "Build the ${name} backend when its library is found" ON)
  find_path(OPVAL_${upper}_INCLUDE_DIR ${arg_HEADER}
    HINTS /usr/include/x86_64-linux-gnu /usr/include
    PATH_SUFFIXES ${arg_SUFFIXES})
  find_library(OPVAL_${upper}_LIBRARY NAMES ${arg_LIBRARY})
  set(found OFF)
  if(OPVAL_${upper}_INCLUDE_DIR AND OPVAL_${upper}_LIBRARY AND EXISTS ${OPVAL_${upper}_INCLUDE_DIR}/cblas.h)
    set(found ON)
  endif()
  opval_optional_backend(${name} OPTION OPVAL_${upper} FOUND ${found}
    WHAT "${OPVAL_${upper}_LIBRARY}"
    MISSING "${arg_MISSING}"
    SOURCES ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../${name}/${name}_backend.cpp
    INCLUDE_DIRS ${OPVAL_${upper}_INCLUDE_DIR}
    LIBRARIES ${OPVAL_${upper}_LIBRARY})
  set(OPVAL_${upper}_ENABLED ${OPVAL_${upper}_ENABLED} PARENT_SCOPE)
  set(OPVAL_${upper}_TARGET ${OPVAL_${upper}_TARGET} PARENT_SCOPE)
endfunction()
