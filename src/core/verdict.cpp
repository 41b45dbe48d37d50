#include "opval/verdict.hpp"

namespace opval {

std::string_view to_string(state s) {
  switch (s) {
    case state::passed: return "PASSED";
    case state::failed: return "FAILED";
    case state::mistrusted: return "MISTRUSTED";
    case state::skipped: return "SKIPPED";
    case state::unimplemented: return "UNIMPLEMENTED";
  }
  return "?";
}

bool is_failure(state s) { return s == state::failed || s == state::mistrusted; }

}  // namespace opval
