#pragma once
// The outcome of one case: a state, the reason, and the metrics and bound that decided it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opval/compare.hpp"

namespace opval {

/// crash: the worker process running the case died (signal, or exit during the case);
/// timeout: the case ran past its time limit and its worker was killed. Both only with
/// process isolation (opval/isolation.hpp).
enum class state : std::uint8_t { passed, failed, mistrusted, skipped, unimplemented, crash, timeout };

/// PASSED, FAILED, MISTRUSTED, SKIPPED, UNIMPLEMENTED, CRASH, TIMEOUT.
std::string_view to_string(state s);
/// The state named by to_string's text; nullopt for any other text.
std::optional<state> parse_state(std::string_view text);

/// The judgement of one output.
struct output_verdict {
  std::string name;
  state st = state::passed;
  std::string reason;   ///< which element, which bound (empty when passed cleanly)
  std::string bound;    ///< the formula or tolerance that applied
  metrics m;
};

/// The judgement of a case: the worst of its outputs' states, with every reason.
struct verdict {
  state st = state::passed;
  std::string reason;   ///< one line: the first failing output's reason, or the skip reason
  std::string policy;       ///< the policy as given (its text: a name and parameters)
  std::string policy_note;  ///< where it could not apply as given, what was used instead
  std::vector<output_verdict> outputs;
};

/// True for the states that make `opval run` exit non-zero.
bool is_failure(state s);

/// The state and reason of one output from its metrics and bound (`ov.m`, `ov.bound`):
/// MISTRUSTED when it is all zero or constant where the reference is not, FAILED beyond the
/// bound (NaN and Inf mismatches included) or for a systematic rounding bias, else PASSED.
void decide(output_verdict& ov);

}  // namespace opval
