// Totals of a run: one counter per verdict state.
#include "opval/reporter.hpp"

namespace opval {

void run_summary::add(state s) {
  switch (s) {
    case state::passed: ++passed; break;
    case state::failed: ++failed; break;
    case state::mistrusted: ++mistrusted; break;
    case state::skipped: ++skipped; break;
    case state::unimplemented: ++unimplemented; break;
  }
}

}  // namespace opval
