// Formatting shared by the reporters.
#include "report/report_util.hpp"

#include <cctype>

#include <fmt/format.h>

namespace opval::detail {

std::string shell_quote(std::string_view text) {
  std::string q = "'";
  for (char c : text) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::string shell_word(std::string_view text) {
  bool plain = !text.empty();
  for (char c : text)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) ||
                      std::string_view("_-.:=,@+/").find(c) != std::string_view::npos);
  return plain ? std::string(text) : shell_quote(text);
}

std::string repro_command(const case_result& r, std::string_view policy_text) {
  if (!r.repro.empty()) return r.repro;
  std::string cmd = "opval repro " + shell_quote(r.descriptor) + fmt::format(" --seed {}", r.seed);
  if (!r.backend.empty()) cmd += " --backend " + r.backend;
  if (!policy_text.empty()) cmd += " --policy " + shell_word(policy_text);
  return cmd;
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
