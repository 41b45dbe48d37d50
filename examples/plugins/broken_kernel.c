/* Test plugins that load but misbehave. BROKEN_ABI: built for ABI 999, opval must refuse it
 * naming both versions. Otherwise: every kernel call fails with a message, which opval must
 * report as the case's FAILED reason. */
#include <stdio.h>

#include "opval/plugin.h"

#ifdef BROKEN_ABI
uint32_t opval_plugin_abi_version(void) { return 999; }
#else
uint32_t opval_plugin_abi_version(void) { return OPVAL_PLUGIN_ABI_VERSION; }
#endif
const char* opval_plugin_name(void) { return "broken_kernel"; }
int opval_plugin_supports(const opval_problem* p, char* reason, size_t size) { return 0; }
int opval_plugin_execute(const opval_problem* p, const opval_tensor* in, size_t n_in,
                         opval_tensor* out, size_t n_out, void* stream, char* error,
                         size_t error_size) {
  snprintf(error, error_size, "broken_kernel: no kernel for %s", p->descriptor);
  return 3;
}
