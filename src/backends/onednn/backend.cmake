# The oneDNN backend (one file per op family, as oneDNN CPU primitives), built as its module
# libopval_backend_onednn.so only when oneDNN's headers and library are found.
option(OPVAL_ONEDNN "Build the onednn backend when oneDNN is found" ON)
find_path(OPVAL_ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.hpp HINTS /usr/include /usr/local/include)
find_library(OPVAL_ONEDNN_LIBRARY NAMES dnnl)
file(GLOB OPVAL_ONEDNN_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
set(OPVAL_ONEDNN_FOUND OFF)
if(OPVAL_ONEDNN_INCLUDE_DIR AND OPVAL_ONEDNN_LIBRARY)
  set(OPVAL_ONEDNN_FOUND ON)
endif()
opval_optional_backend(onednn OPTION OPVAL_ONEDNN FOUND ${OPVAL_ONEDNN_FOUND}
  WHAT "${OPVAL_ONEDNN_LIBRARY}"
  MISSING "oneDNN not found (oneapi/dnnl/dnnl.hpp or libdnnl)"
  SOURCES ${OPVAL_ONEDNN_SOURCES}
  INCLUDE_DIRS ${OPVAL_ONEDNN_INCLUDE_DIR}
  LIBRARIES ${OPVAL_ONEDNN_LIBRARY})
