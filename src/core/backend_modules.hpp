#pragma once
// The backends that wrap a library (onednn, openblas, blis, opencl, cuda) are modules of their
// own, libopval_backend_<name>.so, loaded when the backend registry needs them (the module of
// the name asked for first, every module to list them all) with RTLD_LOCAL: the symbols of one module and of the libraries it links stay out of the others'
// lookup scope, so two libraries that export the same names (two BLAS, each with its
// cblas_sgemm) cannot interpose on each other, and the process that never asks for a backend
// (the parent of the isolated workers) never runs a library's code. A module registers its
// backends (OPVAL_REGISTER_BACKEND) and device runtimes from its static initializers, as code
// in libopval does.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace opval::detail {

/// Where modules are looked for, in order: $OPVAL_BACKENDS_PATH (colon-separated), backends/
/// beside libopval, lib/opval/backends under its prefix. The first module of a name wins.
std::vector<std::filesystem::path> backend_module_dirs();

/// Loads every module of backend_module_dirs() once per process (later calls return at once).
void load_backend_modules();

/// Loads the module named `name` (libopval_backend_<name>.so) alone, if there is one and it
/// was not tried: a process that asks for one backend loads its library, not every library.
void load_backend_module(std::string_view name);

/// The modules that could not be loaded, by the name in their file (libopval_backend_<name>.so),
/// with the loader's reason: the backend they would have registered is unavailable, and says why.
const std::map<std::string, std::string>& unloadable_backend_modules();

}  // namespace opval::detail
