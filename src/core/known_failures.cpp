// Reading the known-failures list.
#include "core/known_failures.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/cpu_features.hpp"
#include "opval/error.hpp"
#include "opval/problem.hpp"

namespace opval {
namespace {

// The backends a section may name: opval's own, built here or not (one file serves every
// build), and the Python layer's framework adapters (python/opval/adapters).
const std::vector<std::string_view>& section_backends() {
  static const std::vector<std::string_view> names{
      "sim",   "onednn",        "onednn_winograd", "openblas", "blis",       "opencl",
      "cuda",  "torch",         "torch_compile",   "onnxruntime", "jax",     "tensorflow",
      "tensorflow_function",    "tensorflow_xla",  "iree"};
  return names;
}

std::string known_section_backends() {
  std::string list;
  for (std::string_view n : section_backends()) list += (list.empty() ? "" : " ") + std::string(n);
  return list;
}

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// A section header, `[backend]` or `[backend where flag !flag ...]`: the backend, and whether
// the section applies on a CPU with `cpu_flags` (every `flag` present, every `!flag` absent).
}  // namespace

bool names_a_backend(std::string_view name) {
  const auto& names = section_backends();
  return std::find(names.begin(), names.end(), name) != names.end() || name.starts_with("plugin:") ||
         name.starts_with("python:");
}

namespace {

std::pair<std::string, bool> read_section(std::string_view line, const std::vector<std::string>& cpu_flags,
                                          const std::string& where) {
  const std::string form = ": a section is written [backend] or [backend where flag !flag ...]";
  if (line.back() != ']' || line.size() < 3) throw error(where + form);
  std::istringstream words{std::string(line.substr(1, line.size() - 2))};
  std::string backend, keyword;
  words >> backend >> keyword;
  if (backend.empty()) throw error(where + form);
  if (!names_a_backend(backend))
    throw error(where + ": unknown backend '" + backend + "' in a section header (known: " + known_section_backends() +
                ", plugin:NAME, python:NAME)");
  if (keyword.empty()) return {backend, true};
  if (keyword != "where") throw error(where + form + " (got '" + keyword + "' after the backend)");
  bool holds = true, any = false;
  for (std::string word; words >> word; any = true) {
    const bool absent = word.front() == '!';
    const std::string flag = absent ? word.substr(1) : word;
    if (!is_known_vector_flag(flag))
      throw error(where + ": unknown CPU flag '" + flag + "' in a section condition (known: " + known_vector_flags() + ")");
    const bool has = std::find(cpu_flags.begin(), cpu_flags.end(), flag) != cpu_flags.end();
    holds = holds && has != absent;
  }
  if (!any) throw error(where + form + " (no flag after 'where')");
  return {backend, holds};
}

}  // namespace

known_failures known_failures::load(const std::string& path) {
  // An ifstream opens a directory and reads it as empty: that would be an empty list.
  if (std::filesystem::is_directory(path))
    throw error("cannot read known-failures file '" + path + "': it is a directory");
  std::ifstream in(path);
  if (!in) throw error("cannot read known-failures file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

known_failures known_failures::parse(std::string_view text, const std::string& origin) {
  return parse(text, origin, cpu_vector_flags());
}

known_failures known_failures::parse(std::string_view text, const std::string& origin,
                                     const std::vector<std::string>& cpu_flags) {
  known_failures k;
  std::string backend, cause;
  bool applies = true;
  std::size_t line_no = 0;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a byte-order mark opens the text
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = trimmed(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++line_no;
    const std::string where = origin + ":" + std::to_string(line_no);
    if (line.empty()) continue;
    if (line.front() == '#') {
      cause = std::string(trimmed(line.substr(1)));
      continue;
    }
    if (line.front() == '[') {
      std::tie(backend, applies) = read_section(line, cpu_flags, where);
      continue;
    }
    if (backend.empty()) throw error(where + ": descriptor before any [backend] section");
    try {
      const std::string descriptor = parse_problem(line).to_string();
      if (applies) k.causes_[{backend, descriptor}] = cause;
    } catch (const error& e) {
      throw error(where + ": " + e.what());
    }
  }
  return k;
}

const std::string* known_failures::cause(std::string_view backend, std::string_view descriptor) const {
  const auto it = causes_.find({std::string(backend), std::string(descriptor)});
  return it == causes_.end() ? nullptr : &it->second;
}

std::map<std::string, std::string> known_failures::of_backend(std::string_view backend) const {
  std::map<std::string, std::string> out;
  for (const auto& [key, cause] : causes_)
    if (key.first == backend) out.emplace(key.second, cause);
  return out;
}

}  // namespace opval
