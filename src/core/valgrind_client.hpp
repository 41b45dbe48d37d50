#pragma once
// What opval asks valgrind when it runs under it (`opval run --under valgrind`,
// scripts/memcheck): whether it does, and how many errors memcheck has reported so far, so
// that a case during which the count grows fails with valgrind's report named. Outside
// valgrind (or built without valgrind's header) both answer "no": the client requests are a
// few no-op instructions on the native CPU.
#include <cstdlib>
#include <cstring>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define OPVAL_HAVE_VALGRIND_H 1
#endif

namespace opval::detail {

/// True when this process runs under valgrind.
inline bool under_valgrind() {
#ifdef OPVAL_HAVE_VALGRIND_H
  if (RUNNING_ON_VALGRIND) return true;
#endif
  // Without the header: valgrind preloads its vgpreload_* libraries into every client.
  const char* preload = std::getenv("LD_PRELOAD");
  return preload && std::strstr(preload, "vgpreload");
}

/// Errors valgrind has reported in this process so far (0 outside valgrind).
inline unsigned valgrind_error_count() {
#ifdef OPVAL_HAVE_VALGRIND_H
  return RUNNING_ON_VALGRIND ? VALGRIND_COUNT_ERRORS : 0;
#else
  return 0;
#endif
}

}  // namespace opval::detail
