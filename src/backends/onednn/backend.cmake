# The oneDNN backend (one file per op family, as oneDNN CPU primitives), compiled into
# opval_core only when oneDNN's headers and library are found.
option(OPVAL_ONEDNN "Build the onednn backend when oneDNN is found" ON)
find_path(OPVAL_ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.hpp HINTS /usr/include /usr/local/include)
find_library(OPVAL_ONEDNN_LIBRARY NAMES dnnl)

if(OPVAL_ONEDNN AND OPVAL_ONEDNN_INCLUDE_DIR AND OPVAL_ONEDNN_LIBRARY)
  message(STATUS "opval: oneDNN backend enabled (${OPVAL_ONEDNN_LIBRARY})")
  file(GLOB OPVAL_ONEDNN_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
  target_sources(opval_core PRIVATE ${OPVAL_ONEDNN_SOURCES})
  target_include_directories(opval_core PRIVATE ${OPVAL_ONEDNN_INCLUDE_DIR})
  target_link_libraries(opval_core PRIVATE ${OPVAL_ONEDNN_LIBRARY})
  target_compile_definitions(opval_core PRIVATE OPVAL_HAVE_ONEDNN=1)
elseif(NOT OPVAL_ONEDNN)
  message(STATUS "opval: the onednn backend is switched off (OPVAL_ONEDNN=OFF)")
else()
  message(STATUS "opval: oneDNN not found (oneapi/dnnl/dnnl.hpp or libdnnl), the onednn backend is not built")
endif()
