#include "core/backend_modules.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <system_error>

#include "core/install_dirs.hpp"

namespace opval::detail {
namespace {

constexpr std::string_view module_prefix = "libopval_backend_";
constexpr std::string_view module_suffix = ".so";

// What has been loaded: the modules tried (each once) and why some failed, under one lock.
// Recursive: a module's static initializer may itself ask the registry for a backend.
struct loader_state {
  std::recursive_mutex lock;
  std::set<std::string> tried;
  std::map<std::string, std::string> failed;
  bool all = false;
};

loader_state& loader() {
  static loader_state state;
  return state;
}

// Loads module `name` from `file` unless it was tried. Never closed: the backends it registers
// live as long as the process.
void load_once(loader_state& st, const std::string& name, const std::filesystem::path& file) {
  if (!st.tried.insert(name).second) return;
  if (::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
    const char* why = ::dlerror();
    st.failed[name] = file.string() + " could not be loaded: " + (why ? why : "unknown reason");
  }
}

/// The module holding backend `backend`: its own name, else the longest `_`-separated prefix
/// of it that names a module. Empty when none does.
std::string holder_of(std::string_view backend, const std::map<std::string, std::filesystem::path>& files) {
  for (std::string name(backend); !name.empty();) {
    if (files.count(name)) return name;
    const std::size_t cut = name.rfind('_');
    name = cut == std::string::npos ? std::string() : name.substr(0, cut);
  }
  return {};
}

}  // namespace

std::string module_name_of(const std::filesystem::path& file) {
  const std::string f = file.filename().string();
  if (!f.starts_with(module_prefix) || !f.ends_with(module_suffix) || f.size() <= module_prefix.size() + module_suffix.size())
    return {};
  return f.substr(module_prefix.size(), f.size() - module_prefix.size() - module_suffix.size());
}

std::vector<std::filesystem::path> backend_module_dirs() {
  return installed_dirs("OPVAL_BACKENDS_PATH", "backends", "lib/opval/backends");
}

std::map<std::string, std::filesystem::path> backend_module_files() {
  std::map<std::string, std::filesystem::path> files;
  for (const auto& dir : backend_module_dirs()) {
    std::vector<std::filesystem::path> here;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (!module_name_of(it->path()).empty()) here.push_back(it->path());
    std::sort(here.begin(), here.end());
    for (const auto& file : here) files.emplace(module_name_of(file), file);  // an earlier folder's wins
  }
  return files;
}

void load_backend_modules(const std::function<void(const std::filesystem::path&)>& before_each) {
  loader_state& st = loader();
  const std::lock_guard<std::recursive_mutex> hold(st.lock);
  if (st.all) return;
  for (const auto& [name, file] : backend_module_files()) {
    if (before_each && !st.tried.count(name)) before_each(file);
    load_once(st, name, file);
  }
  st.all = true;
}

void mark_module_unloadable(const std::string& name, const std::string& why) {
  loader_state& st = loader();
  const std::lock_guard<std::recursive_mutex> hold(st.lock);
  st.tried.insert(name);
  st.failed[name] = why;
}

void load_backend_module(std::string_view name) {
  loader_state& st = loader();
  const std::lock_guard<std::recursive_mutex> hold(st.lock);
  if (st.all || st.tried.count(std::string(name))) return;
  const auto files = backend_module_files();
  if (const auto it = files.find(std::string(name)); it != files.end()) load_once(st, it->first, it->second);
}

void load_module_of(std::string_view backend) {
  const std::string holder = holder_of(backend, backend_module_files());
  if (!holder.empty()) load_backend_module(holder);
}

std::optional<std::string> module_failure_of(std::string_view backend) {
  const std::string holder = holder_of(backend, backend_module_files());
  loader_state& st = loader();
  const std::lock_guard<std::recursive_mutex> hold(st.lock);
  const auto it = st.failed.find(holder);
  if (holder.empty() || it == st.failed.end()) return std::nullopt;
  return it->second;
}

const std::map<std::string, std::string>& unloadable_backend_modules() {
  load_backend_modules();
  return loader().failed;
}

}  // namespace opval::detail
