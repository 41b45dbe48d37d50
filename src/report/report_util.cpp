// Formatting shared by the reporters.
#include "report/report_util.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

namespace opval::detail {

// The descriptor column: the op and the dt (which have their own columns) are dropped,
// and long descriptors are cut at a token boundary where possible so the table stays
// aligned; the repro command always carries the full text.
std::string descriptor_cell(const case_result& r) {
  constexpr std::size_t descriptor_width = 44;
  std::string_view d = r.descriptor;
  if (d.starts_with(r.op) && (d.size() == r.op.size() || d[r.op.size()] == ' '))
    d.remove_prefix(std::min(d.size(), r.op.size() + 1));
  std::string cell;
  std::size_t pos = 0;
  while (pos < d.size()) {
    std::size_t end = d.find(' ', pos);
    if (end == std::string_view::npos) end = d.size();
    std::string_view token = d.substr(pos, end - pos);
    if (!token.empty() && token != "dt=" + r.contract) {
      if (!cell.empty()) cell += ' ';
      cell += token;  // appended in place: GCC 12 flags the temporary of a concatenation (-Wrestrict)
    }
    pos = end + 1;
  }
  if (cell.empty()) cell = "(defaults)";
  if (cell.size() <= descriptor_width) return cell;
  std::string cut = cell.substr(0, descriptor_width - 3);
  if (std::size_t space = cut.rfind(' '); space != std::string::npos && space > descriptor_width / 2)
    cut.resize(space);
  return cut + "...";
}

std::string state_label(state s) {
  std::string label(to_string(s));
  for (char& c : label) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return label;
}

std::string index_string(const dims& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(index[i]);
  }
  return s + "]";
}

std::string compact(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", x);
}

std::string duration(double seconds) {
  if (seconds < 1) return fmt::format("{:.1f}ms", seconds * 1e3);
  return fmt::format("{:.2f}s", seconds);
}

std::string time_text(double seconds) {
  if (seconds < 1e-6) return fmt::format("{:.3g}ns", seconds * 1e9);
  if (seconds < 1e-3) return fmt::format("{:.3g}us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3g}ms", seconds * 1e3);
  return fmt::format("{:.3g}s", seconds);
}

std::string wrap(std::string_view text, int width, int indent, int first_indent) {
  std::string out;
  std::size_t line = 0;  // columns on the current line, its indent included
  bool line_has_words = false;
  auto start_line = [&](int spaces) {
    out.append(static_cast<std::size_t>(spaces), ' ');
    line = static_cast<std::size_t>(spaces);
    line_has_words = false;
  };
  start_line(first_indent);
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (line_has_words && line + 1 + word.size() > static_cast<std::size_t>(width)) {
      out += '\n';
      start_line(indent);
    }
    if (line_has_words) out += ' ', ++line;
    out += word;
    line += word.size();
    line_has_words = true;
  }
  out += '\n';
  return out;
}

std::string paint(std::string_view text, state s, bool colour, bool known) {
  if (!colour) return std::string(text);
  const char* code = "33";  // yellow: refused, or a known failure
  if (!known) switch (s) {
      case state::passed: code = "32"; break;
      case state::failed: case state::crash: case state::timeout: code = "1;31"; break;
      case state::mistrusted: code = "35"; break;
      case state::skipped: case state::unimplemented: break;
    }
  return fmt::format("\033[{}m{}\033[0m", code, text);
}

}  // namespace opval::detail
