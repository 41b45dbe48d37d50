// A stub NVTX injection library, as Nsight Systems' own is loaded: NVTX3's first call dlopens
// $NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2, which fills the entries of
// NVTX's function tables it handles. This one handles the global domain's ranges and
// registered strings, the calls opval makes, and records each range (stub_trace.hpp).
#include <nvtx3/nvToolsExt.h>

#include <string>

#include "stub_trace.hpp"

namespace {

std::string message_of(const nvtxEventAttributes_t* a) {
  if (!a) return "?";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii;
    // A registered string's handle is the copy made by register_string below.
    case NVTX_MESSAGE_TYPE_REGISTERED: return *reinterpret_cast<const std::string*>(a->message.registered);
    default: return "?";
  }
}

int NVTX_API push(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  opval_stub::record("begin", message_of(a));
  return 0;
}

int NVTX_API pop(nvtxDomainHandle_t) {
  opval_stub::record("end");
  return 0;
}

nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(new std::string(s));  // kept for the process's life
}

template <class F>
void set(NvtxFunctionTable table, unsigned size, unsigned id, F f) {
  if (id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable core2 = nullptr;
  unsigned size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &size)) return 0;
  set(core2, size, NVTX_CBID_CORE2_DomainRangePushEx, &push);
  set(core2, size, NVTX_CBID_CORE2_DomainRangePop, &pop);
  set(core2, size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  opval_stub::record("loaded", "nvtx");
  return 1;
}
