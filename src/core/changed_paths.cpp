// What a change touches (core/changed_paths.hpp).
#include "core/changed_paths.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/command_output.hpp"
#include "core/shell_quote.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

std::vector<std::string> lines_of(std::istream& in) {
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::vector<std::string> git_diff(const std::string& revision) {
  const std::optional<std::string> text =
      command_output(fmt::format("git diff --name-only {} -- 2>/dev/null", detail::shell_word(revision)));
  if (!text)
    throw error(fmt::format("--changes '{}' is neither a file of paths nor a git revision here (git diff failed)",
                            revision));
  std::istringstream in(*text);
  return lines_of(in);
}

// The parts of a path a name can match: its folders and its file name without extension.
std::vector<std::string> parts_of(const std::string& path) {
  std::vector<std::string> parts;
  const std::filesystem::path p(path);
  for (const auto& part : p.parent_path()) parts.push_back(part.string());
  parts.push_back(p.stem().string());
  return parts;
}

bool names(const std::string& part, const std::string& name) {
  return part == name || part.starts_with(name + "_");
}

}  // namespace

std::vector<std::string> changed_paths(const std::string& spec) {
  if (std::filesystem::is_regular_file(spec)) {
    std::ifstream in(spec);
    if (!in) throw error(fmt::format("--changes: cannot read '{}'", spec));
    return lines_of(in);
  }
  return git_diff(spec);
}

touched_names touched_by(std::span<const std::string> paths, std::span<const std::string> ops,
                         std::span<const std::string> backends) {
  touched_names out;
  for (const std::string& path : paths)
    for (const std::string& part : parts_of(path)) {
      for (const std::string& op : ops)
        if (names(part, op) || (part.starts_with("common_") && op.find(part.substr(7)) != std::string::npos))
          out.ops.insert(op);
      for (const std::string& b : backends)
        if (names(part, b) || b.starts_with(part + "_")) out.backends.insert(b);
    }
  return out;
}

}  // namespace opval
