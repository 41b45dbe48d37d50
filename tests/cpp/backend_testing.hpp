// Scaffolding shared by the backend tests (tests/cpp/test_<backend>_backend.cpp): making the
// backend or skipping, checking refusals, running suites on it and judging the verdicts, so
// that every backend is held to the same "PASSED or refused with a reason" rule.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/error.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::testing {

/// The backend `name`, or null when this build does not register it, or when `device_probe`
/// (a problem line) is given and the backend SKIPs it because the machine has no device.
inline std::unique_ptr<backend> backend_or_null(const std::string& name, const char* device_probe = nullptr) {
  try {
    auto b = make_backend(name);
    if (device_probe) {
      const support s = b->supports(parse_problem(device_probe));
      if (!s.ok && s.st == state::skipped) return nullptr;
    }
    return b;
  } catch (const error&) {
    return nullptr;
  }
}

/// Declares `var` as backend `name` (optionally probed, see backend_or_null) or skips the test.
#define OPVAL_BACKEND_OR_SKIP(var, name, ...)                                  \
  auto var = ::opval::testing::backend_or_null(name __VA_OPT__(, ) __VA_ARGS__); \
  if (!var) GTEST_SKIP() << "no backend '" << (name) << "' in this build, or no device for it"

/// Expects `b` to refuse the problem `line` as UNIMPLEMENTED and returns its reason.
inline std::string unimplemented_reason(backend& b, const char* line) {
  const support s = b.supports(parse_problem(line));
  EXPECT_FALSE(s.ok) << line;
  EXPECT_EQ(s.st, state::unimplemented) << line;
  return s.reason;
}

/// Every smoke and regression case of `ops` run on `b`, except the descriptors in `exclusions`;
/// computed once per backend name, ops and exclusions, since the suites are slow to run.
inline const std::vector<case_result>& suite_results(backend& b, const std::vector<std::string>& ops,
                                                     const std::set<std::string>& exclusions = {}) {
  static std::map<std::string, std::vector<case_result>> cache;
  std::string key = b.name();
  for (const auto& op : ops) key += "\n" + op;
  key += "\n--";
  for (const auto& d : exclusions) key += "\n" + d;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::vector<case_result> out;
  for (const char* tag : {"smoke", "regression"})
    for (const auto& lp : suite_problems(tag, ops))
      if (!exclusions.count(lp.prob.to_string())) out.push_back(run_case(lp.prob, b, {}, lp.source));
  return cache.emplace(key, std::move(out)).first->second;
}

/// Expects a non-empty run where every case PASSED or was refused (SKIPPED / UNIMPLEMENTED)
/// with a reason, never FAILED or MISTRUSTED.
inline void expect_passed_or_refused(const std::vector<case_result>& results) {
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) {
    const state st = r.v.st;
    EXPECT_TRUE(st == state::passed || st == state::skipped || st == state::unimplemented)
        << r.descriptor << ": " << to_string(st) << ": " << r.v.reason << "\n  " << r.repro;
    if (st != state::passed) EXPECT_FALSE(r.v.reason.empty()) << r.descriptor;
  }
}

/// How many cases of each op PASSED.
inline std::map<std::string, int> passed_per_op(const std::vector<case_result>& results) {
  std::map<std::string, int> passed;
  for (const auto& r : results)
    if (r.v.st == state::passed) ++passed[r.op];
  return passed;
}

}  // namespace opval::testing
