#pragma once
// The entry points of a kernel plugin (opval/plugin.h), resolved. The loader fills them from
// a shared library; tests and fuzz targets fill them with their own functions to check what
// opval makes of a plugin's declared metadata without loading a library.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "opval/backend.hpp"
#include "opval/plugin.h"

namespace opval::detail {

/// One plugin's functions; `abi_minor_version` (minor 0) and `device` (the plugin wants host
/// tensors) may be null.
struct plugin_entry_points {
  std::uint32_t (*abi_version)() = nullptr;
  std::uint32_t (*abi_minor_version)() = nullptr;
  const char* (*name)() = nullptr;
  int (*supports)(const opval_problem*, char*, std::size_t) = nullptr;
  int (*execute)(const opval_problem*, const opval_tensor*, std::size_t, opval_tensor*, std::size_t,
                 void*, char*, std::size_t) = nullptr;
  std::int32_t (*device)() = nullptr;
};

/// A backend over `f` that checks the plugin's metadata (ABI version, name, device kind) as
/// load_plugin_backend does, naming the plugin `path` in errors. Throws opval::error.
std::unique_ptr<backend> make_plugin_backend(const plugin_entry_points& f, const std::string& path);

}  // namespace opval::detail
