#pragma once
// Loads a user kernel library that implements the C ABI of opval/plugin.h as a backend.
#include <memory>
#include <string>

#include "opval/backend.hpp"

namespace opval {

/// Opens the plugin at `path` (dlopen) and checks its ABI version. The backend is named
/// "plugin:<the plugin's name>" and keeps the library loaded while it lives. Throws
/// opval::error when the file cannot be loaded, lacks an opval_plugin_* symbol (naming it
/// and the file) or was built for another ABI version (naming both).
std::unique_ptr<backend> load_plugin_backend(const std::string& path);

}  // namespace opval
