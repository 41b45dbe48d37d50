#include "opval/verdict.hpp"

namespace opval {

std::string_view to_string(state s) {
  switch (s) {
    case state::passed: return "PASSED";
    case state::failed: return "FAILED";
    case state::mistrusted: return "MISTRUSTED";
    case state::skipped: return "SKIPPED";
    case state::unimplemented: return "UNIMPLEMENTED";
    case state::crash: return "CRASH";
    case state::timeout: return "TIMEOUT";
  }
  return "?";
}

std::optional<state> parse_state(std::string_view text) {
  for (state s : {state::passed, state::failed, state::mistrusted, state::skipped, state::unimplemented,
                  state::crash, state::timeout})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

bool is_failure(state s) {
  return s == state::failed || s == state::mistrusted || s == state::crash || s == state::timeout;
}

}  // namespace opval
