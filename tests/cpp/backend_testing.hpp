// Scaffolding shared by the backend tests (tests/cpp/test_<backend>_backend.cpp): making the
// backend or skipping, checking refusals, running suites on it and judging the verdicts, so
// that every backend is held to the same "PASSED or refused with a reason" rule.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/backend.hpp"
#include "core/device.hpp"
#include "opval/error.hpp"
#include "core/known_failures.hpp"
#include "core/backend_modules.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::testing {

/// The backend `name`, or null when this build does not register it, or when `device_probe`
/// (a problem line) is given and the backend SKIPs it because the machine has no device. A
/// backend whose module is in the build but cannot be loaded is a test failure, not a skip.
inline std::unique_ptr<backend> backend_or_null(const std::string& name, const char* device_probe = nullptr) {
  try {
    auto b = make_backend(name);
    if (device_probe) {
      const support s = b->supports(parse_problem(device_probe));
      if (!s.ok && s.st == state::skipped) return nullptr;
    }
    return b;
  } catch (const error& e) {
    if (const std::optional<std::string> why = detail::module_failure_of(name))
      ADD_FAILURE() << "backend '" << name << "' is in this build but its module " << *why;
    return nullptr;
  }
}

/// Declares `var` as backend `name` (optionally probed, see backend_or_null) or skips the test.
#define OPVAL_BACKEND_OR_SKIP(var, name, ...)                                  \
  auto var = ::opval::testing::backend_or_null(name __VA_OPT__(, ) __VA_ARGS__); \
  if (!var) GTEST_SKIP() << "no backend '" << (name) << "' in this build, or no device for it"

/// The descriptors tests/known_failures.txt lists for `backend`: the documented cases where the
/// library disagrees with the contract (the same list `opval run --known-failures` reads).
inline std::set<std::string> known_failures_of(const std::string& backend) {
  std::set<std::string> out;
  for (const auto& [descriptor, cause] :
       known_failures::load(OPVAL_SOURCE_DIR "/tests/known_failures.txt").of_backend(backend))
    out.insert(descriptor);
  return out;
}

/// What oneDNN runs on this CPU, read from its version line ("oneDNN 2.6.3 (hash), isa avx2"):
/// which cases a oneDNN test can expect to run and pass depends on it.
struct onednn_isa {
  std::string name;   ///< oneDNN's name of the ISA it dispatches to
  bool bf16 = false;  ///< bf16 primitives exist: oneDNN 2.6 has them from avx512_core on
  bool vnni = false;  ///< int8 dot products without int16 saturation: avx512_core_vnni, avx2_vnni, amx
};
inline onednn_isa onednn_isa_of(const backend& b) {
  const std::string v = b.version(), marker = ", isa ";
  const std::size_t at = v.find(marker);
  onednn_isa isa;
  isa.name = at == std::string::npos ? "" : v.substr(at + marker.size());
  isa.bf16 = isa.name.starts_with("avx512_core");
  isa.vnni = isa.name.find("vnni") != std::string::npos || isa.name.find("amx") != std::string::npos ||
             isa.name == "avx512_core_bf16";
  return isa;
}

/// `inner` with one output element of every run perturbed by far more than any bound allows:
/// a planted bug the suites must catch.
class perturbing_backend final : public backend {
 public:
  explicit perturbing_backend(std::unique_ptr<backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name() + "_perturbed"; }
  std::string version() const override { return inner_->version(); }
  support supports(const problem& p) const override { return inner_->supports(p); }
  void prepare(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    inner_->prepare(p, in, out);
  }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    return inner_->execute(p, in, out);
  }
  std::optional<double> synchronize(std::span<tensor> out) override {
    const std::optional<double> t = inner_->synchronize(out);
    tensor& y = out[0];
    if (y.numel() > 0) {
      const std::int64_t i = y.numel() / 2;
      const double v = y.at(i);
      y.set_at(i, std::isfinite(v) ? v + 0.25 * (std::fabs(v) + 1) : 0.5);  // NaN / Inf: a finite value
    }
    return t;
  }

 private:
  std::unique_ptr<backend> inner_;
};

/// Every smoke case of `ops` that backend `name` supports, run with one output element
/// perturbed (perturbing_backend): none may pass, and at least `at_least` must be judged.
inline void expect_perturbation_caught(const std::string& name, const std::vector<std::string>& ops, int at_least) {
  perturbing_backend bad(make_backend(name));
  int judged = 0;
  for (const auto& lp : suite_problems("smoke", ops)) {
    if (!bad.supports(lp.prob).ok) continue;
    const case_result r = run_case(lp.prob, bad, {});
    if (r.v.st == state::passed) ADD_FAILURE() << lp.prob.to_string() << " passed with a perturbed output";
    ++judged;
  }
  EXPECT_GE(judged, at_least);
}

/// Why CUDA work cannot run here ("" when a device is usable).
inline std::string cuda_unavailable_reason() {
  const device_runtime* rt = find_device_runtime(device_kind::cuda);
  return rt ? rt->unavailable_reason() : "opval was built without CUDA";
}

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

/// True when op `op` is compiled into this build (OPVAL_OPS may leave ops out).
inline bool op_in_build(std::string_view op) {
  for (const op_spec* s : all_ops())
    if (s->name() == op) return true;
  return false;
}

/// Expects at least `min[op]` PASSED cases of each op in this build.
inline void expect_min_passed(const std::vector<case_result>& results, const std::map<std::string, int>& min) {
  std::map<std::string, int> passed = passed_per_op(results);
  for (const auto& [op, n] : min)
    if (op_in_build(op)) EXPECT_GE(passed[op], n) << op;
}

/// Expects every listed known failure of an op in `ops` (all ops in this build when empty) to
/// still fail or be mistrusted on b: when the library is fixed the list must shrink.
inline void expect_known_failures_still_fail(backend& b, const std::set<std::string>& known,
                                             const std::vector<std::string>& ops = {}) {
  for (const std::string& d : known) {
    const problem p = parse_problem(d);
    const std::string op(p.op());
    if (!op_in_build(op) || (!ops.empty() && std::find(ops.begin(), ops.end(), op) == ops.end())) continue;
    const case_result r = run_case(p, b, {});
    EXPECT_TRUE(is_failure(r.v.st)) << d << ": " << to_string(r.v.st) << " " << r.v.reason;
  }
}

}  // namespace opval::testing
