#include "core/backend_modules.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <system_error>

#include "core/install_dirs.hpp"

namespace opval::detail {
namespace {

constexpr std::string_view module_prefix = "libopval_backend_";
constexpr std::string_view module_suffix = ".so";

std::map<std::string, std::string>& unloadable() {
  static std::map<std::string, std::string> failures;
  return failures;
}

/// The backend name in a module's file name; empty for a file that is not a module.
std::string module_name(const std::filesystem::path& file) {
  const std::string f = file.filename().string();
  if (!f.starts_with(module_prefix) || !f.ends_with(module_suffix) || f.size() <= module_prefix.size() + module_suffix.size())
    return {};
  return f.substr(module_prefix.size(), f.size() - module_prefix.size() - module_suffix.size());
}

/// The modules of `dir`, sorted by file name (a stable load order).
std::vector<std::filesystem::path> modules_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!module_name(it->path()).empty()) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

// What has been loaded, under one lock: the names tried (a module is tried once, the first
// of its name in backend_module_dirs()) and whether every module has been.
struct loader_state {
  std::mutex lock;
  std::set<std::string> tried;
  bool all = false;
};

loader_state& loader() {
  static loader_state state;
  return state;
}

// Loads `file` unless a module of its name was tried. Never closed: the backends it registers
// live as long as the process.
void load_once(loader_state& st, const std::filesystem::path& file) {
  const std::string name = module_name(file);
  if (!st.tried.insert(name).second) return;
  if (::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
    const char* why = ::dlerror();
    unloadable()[name] = file.string() + " could not be loaded: " + (why ? why : "unknown reason");
  }
}

}  // namespace

std::vector<std::filesystem::path> backend_module_dirs() {
  return installed_dirs("OPVAL_BACKENDS_PATH", "backends", "lib/opval/backends");
}

void load_backend_modules() {
  loader_state& st = loader();
  const std::lock_guard<std::mutex> hold(st.lock);
  if (st.all) return;
  for (const auto& dir : backend_module_dirs())
    for (const auto& file : modules_in(dir)) load_once(st, file);
  st.all = true;
}

void load_backend_module(std::string_view name) {
  loader_state& st = loader();
  const std::lock_guard<std::mutex> hold(st.lock);
  if (st.all) return;
  std::error_code ec;
  for (const auto& dir : backend_module_dirs())
    if (const auto file = dir / (std::string(module_prefix) + std::string(name) + std::string(module_suffix));
        std::filesystem::exists(file, ec)) {
      load_once(st, file);
      return;
    }
}

const std::map<std::string, std::string>& unloadable_backend_modules() {
  load_backend_modules();
  return unloadable();
}

}  // namespace opval::detail
