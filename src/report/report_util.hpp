#pragma once
// Formatting shared by the reporters (private to src/report/ and the CLI).
#include <string>
#include <string_view>

#include "core/shell_quote.hpp"
#include "opval/runner.hpp"

namespace opval::detail {

/// The descriptor column of the tables (44 characters): without the op and the dt, which have
/// their own columns, cut at a token boundary where possible; "(defaults)" when nothing is left.
std::string descriptor_cell(const case_result& r);
/// The upper-case state name used in tables (PASSED, FAILED, ...).
std::string state_label(state s);
/// "[3,17]" for a multi-index.
std::string index_string(const dims& index);
/// Three significant digits: "0.123", "4.1e+08"; "nan", "inf", "-inf".
std::string compact(double x);
/// "2.9ms" below a second, "1.25s" above.
std::string duration(double seconds);
/// "12.3us", "4.56ms": a latency in the unit that keeps three significant digits readable.
std::string time_text(double seconds);
/// `text` broken at spaces into lines of at most `width` columns, each starting with `indent`
/// spaces (the first with `first_indent`) and ending with '\n'. A word longer than a line is
/// kept whole: a path or a command is never cut.
std::string wrap(std::string_view text, int width, int indent, int first_indent);
/// `text` in the ANSI colour of the state (green passed, red failed, crashed or timed out,
/// magenta mistrusted, yellow refused or a known failure) when `colour`, else as it is.
std::string paint(std::string_view text, state s, bool colour, bool known = false);

}  // namespace opval::detail
