// Asking the terminal, once, at the start of a command (report/terminal.hpp).
#include "report/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace opval {
namespace {

// Narrower than this, no table fits: the layout keeps this minimum and lets lines run over.
constexpr int narrowest = 40;

int terminal_width(int fd) {
  winsize size{};
  if (::isatty(fd) && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n > 0 && n < 10000) return static_cast<int>(n);
  }
  return 120;
}

// https://no-color.org: present and not empty turns colour off.
bool colour_wanted(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
}

}  // namespace

console_style detect_console_style() {
  console_style s;
  s.width = std::max(narrowest, terminal_width(STDOUT_FILENO));
  s.colour = colour_wanted(STDOUT_FILENO);
  s.progress = ::isatty(STDERR_FILENO) ? progress_mode::terminal : progress_mode::log;
  return s;
}

}  // namespace opval
