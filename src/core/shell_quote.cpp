#include "core/shell_quote.hpp"

#include <cctype>

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

}  // namespace opval::detail
