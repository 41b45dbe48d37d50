#include "core/install_dirs.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <system_error>

namespace opval::detail {

std::filesystem::path library_dir() {
  namespace fs = std::filesystem;
  Dl_info info{};  // where this very function is
  if (::dladdr(reinterpret_cast<const void*>(&library_dir), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const fs::path library = fs::canonical(info.dli_fname, ec);
  return ec ? fs::path() : library.parent_path();
}

std::vector<std::filesystem::path> installed_dirs(const char* env_var, std::string_view beside,
                                                  std::string_view under_prefix) {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv(env_var); path && *path)
    for (std::string_view rest = path; !rest.empty();) {
      const std::size_t colon = rest.find(':');
      if (const std::string_view item = rest.substr(0, colon); !item.empty()) dirs.emplace_back(item);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  if (const fs::path lib = library_dir(); !lib.empty()) {
    std::error_code ec;
    for (const fs::path& dir : {lib / beside, lib.parent_path() / under_prefix})
      if (fs::is_directory(dir, ec)) dirs.push_back(dir);
  }
  return dirs;
}

}  // namespace opval::detail
