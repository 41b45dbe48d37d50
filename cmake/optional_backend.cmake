# opval_optional_backend(<name> OPTION <var> FOUND <bool> [WHAT <text>] [MISSING <text>]
#                        [SOURCES ...] [INCLUDE_DIRS ...] [LIBRARIES ...] [DEFINITIONS ...]
#                        [PUBLIC_HAVE])
#
# Builds one optional backend as its own module, libopval_backend_<name>.so in backends/
# beside libopval (src/core/backend_modules.hpp: loaded with RTLD_LOCAL on first use of the
# backend registry), when its switch <var> is ON and the library it wraps was found (FOUND),
# and says which of the three happened: enabled (WHAT names the library found), switched off,
# or not found (MISSING names what is missing). The module links the library it wraps; libopval
# links none of them. Its symbols are hidden (only what it marks OPVAL_BACKEND_EXPORT is
# visible), so two modules may hold the same helper code. The module target is
# opval_backend_<name> (OPVAL_<NAME>_TARGET in the caller's scope, for backends that add more);
# it defines OPVAL_HAVE_<NAME>=1, and so does opval_core publicly with PUBLIC_HAVE, so that
# the tests see it too. Sets OPVAL_<NAME>_ENABLED in the caller's scope; every module target
# is listed in the global property OPVAL_BACKEND_MODULES (the Python wheel installs them).
function(opval_optional_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "PUBLIC_HAVE" "OPTION;FOUND;WHAT;MISSING"
                        "SOURCES;INCLUDE_DIRS;LIBRARIES;DEFINITIONS")
  string(TOUPPER "${name}" upper)
  set(enabled OFF)
  set(target opval_backend_${name})
  if(NOT ${arg_OPTION})
    message(STATUS "opval: the ${name} backend is switched off (${arg_OPTION}=OFF)")
  elseif(NOT arg_FOUND)
    message(STATUS "opval: ${arg_MISSING}, the ${name} backend is not built")
  else()
    message(STATUS "opval: ${name} backend enabled (${arg_WHAT})")
    add_library(${target} SHARED ${arg_SOURCES})
    set_target_properties(${target} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/backends
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
      INSTALL_RPATH "$ORIGIN/..")
    target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/src ${arg_INCLUDE_DIRS})
    target_link_libraries(${target} PRIVATE opval::core nlohmann_json::nlohmann_json ${arg_LIBRARIES})
    target_compile_definitions(${target} PRIVATE OPVAL_HAVE_${upper}=1
                               "OPVAL_BACKEND_EXPORT=__attribute__((visibility(\"default\")))" ${arg_DEFINITIONS})
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
                           $<$<CONFIG:Release>:-O3>)
    if(arg_PUBLIC_HAVE)
      target_compile_definitions(opval_core PUBLIC OPVAL_HAVE_${upper}=1)
    endif()
    # Whoever builds opval or a test gets the modules that make its backends (opval_runtime).
    add_dependencies(opval_runtime ${target})
    set_property(GLOBAL APPEND PROPERTY OPVAL_BACKEND_MODULES ${target})
    set(enabled ON)
  endif()
  set(OPVAL_${upper}_ENABLED ${enabled} PARENT_SCOPE)
  set(OPVAL_${upper}_TARGET ${target} PARENT_SCOPE)
endfunction()
