// Reading the known-failures list.
#include "core/known_failures.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "opval/error.hpp"
#include "opval/problem.hpp"

namespace opval {
namespace {

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
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
  known_failures k;
  std::string backend, cause;
  std::size_t line_no = 0;
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
      if (line.back() != ']' || line.size() < 3) throw error(where + ": a section is written [backend]");
      backend = std::string(trimmed(line.substr(1, line.size() - 2)));
      continue;
    }
    if (backend.empty()) throw error(where + ": descriptor before any [backend] section");
    try {
      k.causes_[{backend, parse_problem(line).to_string()}] = cause;
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
