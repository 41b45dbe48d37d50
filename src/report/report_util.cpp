// Formatting shared by the reporters.
#include "report/report_util.hpp"

#include <algorithm>
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

}  // namespace opval::detail
