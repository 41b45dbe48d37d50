#pragma once
// The backends that wrap a library (onednn, openblas, blis, opencl, cuda) are modules of their
// own, libopval_backend_<name>.so, loaded when the backend registry needs them (the module of
// the backend asked for alone; every module only to list them all) with RTLD_LOCAL: the
// symbols of one module and of the libraries it links stay out of the other modules' lookup
// scope, so two modules whose libraries export the same names (two BLAS, each with its
// cblas_sgemm) cannot serve each other, and a process that never asks for a backend (the
// parent of the isolated workers) never runs a library's code. What RTLD_LOCAL cannot stop: a
// symbol already in the global scope (the executable, LD_PRELOAD, a library loaded
// RTLD_GLOBAL) is found first by every module; the BLAS backends check which library serves
// them (common_blas). A module registers its backends (OPVAL_REGISTER_BACKEND), named after it
// (<name>, or <name>_<variant>), and device runtimes, from its static initializers.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opval::detail {

/// Where modules are looked for, in order: $OPVAL_BACKENDS_PATH (colon-separated), backends/
/// beside libopval, lib/opval/backends under its prefix. The first module of a name wins.
std::vector<std::filesystem::path> backend_module_dirs();

/// The backend name in a module's file name (libopval_backend_<name>.so); empty for another file.
std::string module_name_of(const std::filesystem::path& file);

/// The modules found, by name (libopval_backend_<name>.so), without loading any.
std::map<std::string, std::filesystem::path> backend_module_files();

/// Loads every module once per process (later calls return at once); `before_each` is called
/// with each module's file before it is loaded (the worker names it, in case it crashes).
void load_backend_modules(const std::function<void(const std::filesystem::path&)>& before_each = {});

/// Records module `name` as unavailable for `why` without loading it (it crashed a worker).
void mark_module_unloadable(const std::string& name, const std::string& why);

/// Loads the module named `name` alone, if there is one and it was not tried.
void load_backend_module(std::string_view name);

/// Loads the module that holds backend `backend`: its own (libopval_backend_<backend>.so), else
/// the one whose name it extends (onednn for onednn_winograd).
void load_module_of(std::string_view backend);

/// Why the module that holds backend `backend` could not be loaded; nullopt if it loaded or
/// there is none.
std::optional<std::string> module_failure_of(std::string_view backend);

/// The modules that could not be loaded, by name, with the loader's reason.
const std::map<std::string, std::string>& unloadable_backend_modules();

}  // namespace opval::detail
