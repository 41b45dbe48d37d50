# opval_optional_backend(<name> OPTION <var> FOUND <bool> [WHAT <text>] [MISSING <text>]
#                        [SOURCES ...] [INCLUDE_DIRS ...] [LIBRARIES ...] [DEFINITIONS ...]
#                        [PUBLIC_HAVE])
#
# Compiles one optional backend into opval_core when its switch <var> is ON and the library it
# wraps was found (FOUND), and says which of the three happened: enabled (WHAT names the
# library found), switched off, or not found (MISSING names what is missing). An enabled
# backend defines OPVAL_HAVE_<NAME>=1, PUBLIC with PUBLIC_HAVE so that the tests see it too.
# Sets OPVAL_<NAME>_ENABLED in the caller's scope for backends that add more (cuda).
function(opval_optional_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "PUBLIC_HAVE" "OPTION;FOUND;WHAT;MISSING"
                        "SOURCES;INCLUDE_DIRS;LIBRARIES;DEFINITIONS")
  string(TOUPPER "${name}" upper)
  set(enabled OFF)
  if(NOT ${arg_OPTION})
    message(STATUS "opval: the ${name} backend is switched off (${arg_OPTION}=OFF)")
  elseif(NOT arg_FOUND)
    message(STATUS "opval: ${arg_MISSING}, the ${name} backend is not built")
  else()
    message(STATUS "opval: ${name} backend enabled (${arg_WHAT})")
    set(have_scope PRIVATE)
    if(arg_PUBLIC_HAVE)
      set(have_scope PUBLIC)
    endif()
    target_sources(opval_core PRIVATE ${arg_SOURCES})
    target_include_directories(opval_core PRIVATE ${arg_INCLUDE_DIRS})
    target_link_libraries(opval_core PRIVATE ${arg_LIBRARIES})
    target_compile_definitions(opval_core ${have_scope} OPVAL_HAVE_${upper}=1 PRIVATE ${arg_DEFINITIONS})
    set(enabled ON)
  endif()
  set(OPVAL_${upper}_ENABLED ${enabled} PARENT_SCOPE)
endfunction()
