#include "opval/verdict.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/output_judging.hpp"

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

void decide(output_verdict& ov) {
  const metrics& m = ov.m;
  auto worst_text = [&] {
    if (m.worst.empty()) return std::string();
    const auto& w = m.worst.front();
    return fmt::format("worst at {}: expected {:.9g}, got {:.9g}, |err| {:.3g} ({:.3g} ULP) vs bound {:.3g}",
                       detail::format_index(w.index), w.expected, w.got, w.abs_error, w.ulps, w.bound);
  };
  if (m.got_all_zero && m.ref_significant > 0) {
    ov.st = state::mistrusted;
    ov.reason = fmt::format("output '{}' is all zeros where {} reference elements exceed their bound",
                            ov.name, m.ref_significant);
  } else if (m.got_constant && !m.ref_constant) {
    ov.st = state::mistrusted;
    ov.reason = fmt::format("output '{}' is constant ({:.9g}) where the reference is not", ov.name,
                            m.worst.empty() ? 0.0 : m.worst.front().got);
  } else if (m.nan_mismatch || m.inf_mismatch || m.beyond_bound) {
    ov.st = state::failed;
    ov.reason = fmt::format("output '{}': {} of {} elements beyond the bound", ov.name, m.beyond_bound, m.count);
    if (m.nan_mismatch) ov.reason += fmt::format(", {} NaN mismatches", m.nan_mismatch);
    if (m.inf_mismatch) ov.reason += fmt::format(", {} Inf mismatches", m.inf_mismatch);
    ov.reason += "; " + worst_text() + " (" + ov.bound + ")";
  } else if (m.bias.biased) {
    ov.st = state::failed;
    ov.reason = fmt::format("output '{}': systematic rounding bias: {}{}", ov.name, m.bias.note,
                            m.bias.sign_relative_mean < 0 && std::fabs(m.bias.sign_relative_mean) >
                                std::fabs(m.bias.plain_mean) - 1e-12
                                ? " (truncation toward zero where round-to-nearest was promised?)"
                                : " (directed rounding where round-to-nearest was promised?)");
  } else {
    ov.st = state::passed;
  }
}

}  // namespace opval
