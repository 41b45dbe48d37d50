# Writes generated/opval/build_info.hpp with the current git sha; run at every build so result
# records never carry a stale sha. The file is rewritten only when its content changes.
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE OPVAL_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT OPVAL_GIT_SHA)
  set(OPVAL_GIT_SHA unknown)
endif()
configure_file(${SOURCE_DIR}/src/core/build_info.hpp.in ${OUTPUT} @ONLY)
