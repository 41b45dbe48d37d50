// Reading a command's output (core/command_output.hpp).
#include "core/command_output.hpp"

#include <cstdio>

namespace opval {

std::optional<std::string> command_output(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, p)) text.append(buffer, n);
  if (pclose(p) != 0) return std::nullopt;
  return text;
}

}  // namespace opval
