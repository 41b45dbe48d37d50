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

}  // namespace opval::detail
