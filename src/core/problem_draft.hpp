#pragma once
// A problem parsed but not validated: what the suite generator completes (a feature table's
// `complete`) before the problem has every attribute its validation needs, e.g. a block-scaled
// matmul contract before its `block`.
#include <string_view>

#include "opval/problem.hpp"

namespace opval::detail {

/// Parses a descriptor line as parse_problem does, without the op's validation; throws
/// parse_error for a line that does not parse.
problem parse_problem_draft(std::string_view line);

}  // namespace opval::detail
