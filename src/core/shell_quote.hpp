#pragma once
// Quoting for the repro commands that opval prints and records: every path or descriptor in
// them must survive being pasted into a POSIX shell, spaces and single quotes included.
#include <string>
#include <string_view>

namespace opval::detail {

/// `text` quoted for a POSIX shell (single quotes, embedded quotes escaped).
std::string shell_quote(std::string_view text);
/// `text` as one shell word: unchanged when it has no special characters, else quoted.
std::string shell_word(std::string_view text);

}  // namespace opval::detail
