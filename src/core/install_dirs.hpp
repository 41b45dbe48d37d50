#pragma once
// Where the files installed with libopval are found: the folders named by an environment
// variable (colon-separated), then a folder beside libopval itself (where the build and the
// Python wheel put them), then one under its install prefix. Found relative to the library,
// so no source or build path is baked in.
#include <filesystem>
#include <string_view>
#include <vector>

namespace opval::detail {

/// The folder libopval was loaded from (empty if unknown).
std::filesystem::path library_dir();

/// $env_var's folders, then <libopval's folder>/beside, then <libopval's folder>/../under_prefix,
/// the last two only where they exist.
std::vector<std::filesystem::path> installed_dirs(const char* env_var, std::string_view beside,
                                                  std::string_view under_prefix);

}  // namespace opval::detail
