# Allocator interposition for memory accounting (src/heap_hooks, docs/SAFETY.md). An OBJECT
# library, so that every object is linked into the program (malloc and friends must be defined
# in the executable to take precedence over glibc's for every shared library). Linked into
# `opval` and the tests that need it, never into libopval. OFF for valgrind builds, whose tools
# replace malloc themselves (sanitizer builds drop the hooks by themselves).
option(OPVAL_HEAP_HOOKS "Link the allocator hooks that measure kernels' heap use into opval" ON)
if(OPVAL_HEAP_HOOKS)
  add_library(opval_heap_hooks OBJECT ${CMAKE_CURRENT_LIST_DIR}/heap_hooks.cpp)
  target_include_directories(opval_heap_hooks PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(opval_heap_hooks PRIVATE -Wall -Wextra -fno-builtin $<$<CONFIG:Release>:-O2>)
  # libopval finds the counters through a weak reference: keep the symbol in the dynamic table.
  target_link_options(opval_heap_hooks INTERFACE -Wl,--export-dynamic-symbol=opval_heap_hooks_counters)
else()
  add_library(opval_heap_hooks INTERFACE)
endif()
