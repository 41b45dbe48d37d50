// Totals of a run: one counter per verdict state, and how many listed known failures
// failed or passed.
#include "opval/reporter.hpp"

namespace opval {

void run_summary::add(state s) {
  switch (s) {
    case state::passed: ++passed; break;
    case state::failed: ++failed; break;
    case state::mistrusted: ++mistrusted; break;
    case state::skipped: ++skipped; break;
    case state::unimplemented: ++unimplemented; break;
    case state::crash: ++crashed; break;
    case state::timeout: ++timed_out; break;
  }
}

void run_summary::add(const case_result& r) {
  add(r.v.st);
  if (!r.known_failure) return;
  if (is_failure(r.v.st))
    ++known_failed;
  else if (r.v.st == state::passed)
    ++known_passed;
}

}  // namespace opval
