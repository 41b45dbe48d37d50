/* Test plugins that misbehave while opval loads them (tests/cpp/test_plugin_loading.cpp):
 * LOAD_WHERE says when (0: a constructor run by dlopen, 1: opval_plugin_abi_version,
 * 2: opval_plugin_name, 3: opval_plugin_device), LOAD_FAULT what (0: a null-pointer write,
 * 1: a hang, 2: exit(7), 3: a line printed on stdout that looks like an answer of opval's
 * worker protocol, then loading goes on). Under process isolation opval must survive each
 * with one error line naming the plugin; the printing one must load and run. */
#define _POSIX_C_SOURCE 200809L /* pause() */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "opval/plugin.h"

static void misbehave(int where) {
  volatile int* volatile nowhere = NULL; /* neither the pointer nor the write can be optimized away */
  if (where != LOAD_WHERE) return;
  switch (LOAD_FAULT) {
    case 0: *nowhere = 1; break;
    case 1: for (;;) pause(); break;
    case 2: exit(7);
    default:
      printf("R {\"state\":\"PASSED\"}\nB {\"name\":\"impostor\",\"version\":\"0\"}\n");
      fflush(stdout);
  }
}

__attribute__((constructor)) static void on_load(void) { misbehave(0); }

uint32_t opval_plugin_abi_version(void) {
  misbehave(1);
  return OPVAL_PLUGIN_ABI_VERSION;
}

const char* opval_plugin_name(void) {
  misbehave(2);
  return "broken_loading";
}

int32_t opval_plugin_device(void) {
  misbehave(3);
  return OPVAL_DEVICE_CPU;
}

int opval_plugin_supports(const opval_problem* p, char* reason, size_t size) {
  snprintf(reason, size, "broken_loading runs nothing");
  return OPVAL_PLUGIN_UNIMPLEMENTED;
}

int opval_plugin_execute(const opval_problem* p, const opval_tensor* in, size_t n_in, opval_tensor* out,
                         size_t n_out, void* stream, char* error, size_t error_size) {
  snprintf(error, error_size, "broken_loading runs nothing");
  return 1;
}
