// A stub ITT collector, loaded as VTune's is: ittnotify's static part (linked into libopval)
// dlopens $INTEL_LIBITTNOTIFY64 on its first call. This stub speaks the loader's simpler
// handshake (version 1: it exports __itt_api_version, and the loader binds each function of
// the groups named in $INTEL_ITTNOTIFY_GROUPS to the symbol of the same name); VTune's
// collector speaks version 2, which the same loader serves. It records tasks, pauses and
// resumes (stub_trace.hpp).
#define INTEL_NO_MACRO_BODY  // the declarations of the API, not the client's macros
#include <ittnotify.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "stub_trace.hpp"

#define OPVAL_STUB_EXPORT extern "C" __attribute__((visibility("default")))

OPVAL_STUB_EXPORT void __itt_api_version() {}

namespace {

// One object per name, kept for the process's life with its own copy of the name, as a
// collector keeps them. `name_field` is the member that points at the name.
template <class T>
T* interned(const char* name, const char* T::*name_field) {
  struct entry {
    std::string name;
    T object{};
  };
  static std::mutex m;
  static std::map<std::string, std::unique_ptr<entry>> names;
  const std::lock_guard<std::mutex> lock(m);
  std::unique_ptr<entry>& e = names[name];
  if (!e) {
    e = std::make_unique<entry>(entry{name});
    e->object.*name_field = e->name.c_str();
  }
  return &e->object;
}

}  // namespace

// Domains and string handles are made by the loader itself (its lists, flags on) before the
// collector is bound; these serve any made afterwards.
OPVAL_STUB_EXPORT __itt_domain* __itt_domain_create(const char* name) {
  __itt_domain* d = interned(name, &__itt_domain::nameA);
  d->flags = 1;
  return d;
}

OPVAL_STUB_EXPORT __itt_string_handle* __itt_string_handle_create(const char* name) {
  return interned(name, &__itt_string_handle::strA);
}

OPVAL_STUB_EXPORT void __itt_task_begin(const __itt_domain*, __itt_id, __itt_id, __itt_string_handle* name) {
  opval_stub::record("begin", name && name->strA ? name->strA : "?");
}

OPVAL_STUB_EXPORT void __itt_task_end(const __itt_domain*) { opval_stub::record("end"); }
OPVAL_STUB_EXPORT void __itt_pause() { opval_stub::record("pause"); }
OPVAL_STUB_EXPORT void __itt_resume() { opval_stub::record("resume"); }
