/* A plugin without opval_plugin_execute: opval must refuse to load it, naming the symbol. */
#include "opval/plugin.h"

uint32_t opval_plugin_abi_version(void) { return OPVAL_PLUGIN_ABI_VERSION; }
const char* opval_plugin_name(void) { return "broken_missing_execute"; }
int opval_plugin_supports(const opval_problem* p, char* reason, size_t size) { return 0; }
