#include "opval/error.hpp"

#include <fmt/format.h>

namespace opval {
namespace {

std::string printable(std::string_view message) {
  constexpr std::size_t keep = 400;
  std::string clipped(message);
  if (message.size() > 2 * keep + 200)
    clipped = fmt::format("{} [... {} bytes ...] {}", message.substr(0, keep), message.size() - 2 * keep,
                          message.substr(message.size() - keep));
  std::string out;
  for (unsigned char c : clipped) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

}  // namespace

parse_error::parse_error(const std::string& message, std::string token, std::size_t column)
    : error(message), token_(std::move(token)), column_(column) {}

std::string error_line(const std::exception& e) {
  std::string msg = e.what();
  msg = msg.substr(0, msg.find('\n'));
  if (const auto* pe = dynamic_cast<const parse_error*>(&e);
      pe && !pe->token().empty() && msg.find(pe->token()) == std::string::npos &&
      msg.find("column") == std::string::npos)
    msg += fmt::format(" (at '{}', column {})", pe->token(), pe->column());
  return printable(msg);
}

}  // namespace opval
