#pragma once
// The lines a runner and its worker process exchange (private to src/core). Runner -> worker:
// one JSON object per case (request_line). Worker -> runner: `R <record>` with the case's
// JSON record (to_json_line), or `N <text>` notes sent before a crash (a guard-page hit).
#include <string>
#include <string_view>

#include "opval/isolation.hpp"

namespace opval::detail {

/// One case as the worker receives it.
struct case_request {
  located_problem lp;
  backend_ref ref;
  run_options opts;
};

/// The request as one line (no newline). Every field of run_options travels: a field added
/// there must be added here and in parse_request. An alternative reference travels as its
/// backend_ref (the worker makes it); one without (made in Python) throws opval::error.
std::string request_line(const located_problem& lp, const backend_ref& ref, const run_options& o);
/// The inverse of request_line; throws opval::error on a malformed line.
case_request parse_request(std::string_view line);

inline constexpr std::string_view result_prefix = "R ";
inline constexpr std::string_view note_prefix = "N ";

}  // namespace opval::detail
