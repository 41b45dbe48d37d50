// The onednn backend's layer_norm and reduce against their smoke and regression suites: every
// case PASSES or is refused (SKIPPED / UNIMPLEMENTED) with a reason, except the named cases
// where oneDNN 2.6.3 itself disagrees with the contract; enough cases really run, the verdict
// names oneDNN's kernel, and a backend that perturbs one output element is caught. Skipped
// when opval was built without oneDNN (the backend is then not registered).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <set>
#include <string>
#include <vector>

#include "backend_testing.hpp"
#include "opval/backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace {

using opval::case_result;
using opval::problem;
using opval::state;
using opval::tensor;

// Cases where oneDNN 2.6.3 itself disagrees with the contract (documented in
// docs/BACKENDS.md; reproduce one with `opval repro '<descriptor>' --seed 1 --backend onednn`),
// excluded by exact descriptor, grouped by cause.
const std::set<std::string>& known_library_disagreements() {
  static const std::set<std::string> s = opval::testing::known_failures_of("onednn");
  return s;
}

const std::vector<std::string>& ops() {
  static const std::vector<std::string> o{"layer_norm", "reduce"};
  return o;
}

// The fewest PASSED cases each op must reach over its smoke + regression suites: fewer where
// oneDNN has no bf16 primitives (below avx512_core) and those cases are SKIPPED.
std::map<std::string, int> min_passed(const opval::backend& b) {
  if (opval::testing::onednn_isa_of(b).bf16) return {{"layer_norm", 80}, {"reduce", 100}};
  return {{"layer_norm", 60}, {"reduce", 50}};
}

const std::vector<case_result>& suite_results(opval::backend& b) {
  return opval::testing::suite_results(b, ops(), known_library_disagreements());
}

TEST(onednn_norm_reduce, suites_pass_or_are_refused_with_a_reason) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_passed_or_refused(suite_results(*b));
}

TEST(onednn_norm_reduce, each_op_really_runs) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_min_passed(suite_results(*b), min_passed(*b));
}

TEST(onednn_norm_reduce, known_disagreements_still_disagree) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_known_failures_still_fail(*b, known_library_disagreements(), ops());
}

TEST(onednn_norm_reduce, names_the_onednn_kernel_that_ran) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  for (const char* line : {"layer_norm shape=6x100 dt=f32", "layer_norm shape=2x3x5x7 norm_axes=2 dt=f32",
                           "reduce shape=5x6x7 axes=0x2 kind=mean dt=f32"}) {
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
    const std::string& impl = r.exec.implementation;
    EXPECT_NE(impl.find("oneDNN"), std::string::npos) << impl;
    const bool names_kernel = impl.find("layer_normalization") != std::string::npos ||
                              impl.find("jit") != std::string::npos || impl.find("ref") != std::string::npos;
    EXPECT_TRUE(names_kernel) << line << ": " << impl;
    EXPECT_NE(impl.find("fpmath strict"), std::string::npos) << impl;
  }
}

TEST(onednn_norm_reduce, refuses_what_it_cannot_map_naming_it) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  const auto refusal = [&](const char* line) { return opval::testing::unimplemented_reason(*b, line); };
  EXPECT_NE(refusal("layer_norm shape=2x3x40 norm_axes=2 ld=48 dt=f32").find("norm_axes=2"), std::string::npos);
  EXPECT_NE(refusal("layer_norm shape=4x64 dt=bf16:f32:bf16").find("scale and shift in f32"), std::string::npos);
  EXPECT_NE(refusal("layer_norm shape=4x64 dt=f32:f64:f32").find("f64"), std::string::npos);
  EXPECT_NE(refusal("reduce shape=4x64 dt=f16:f16:f16").find("f16"), std::string::npos);
  EXPECT_NE(refusal("reduce shape=4x64 dt=i32").find("i32"), std::string::npos);
  EXPECT_NE(refusal("reduce shape=4x1 axes=1 dt=f32").find("extent 1"), std::string::npos);
  // rms_norm has no oneDNN 2.6 primitive at all.
  EXPECT_NE(refusal("rms_norm shape=4x64 dt=f32").find("no rms_norm kernel"), std::string::npos);
}

TEST(onednn_norm_reduce, keepdims_and_reducing_every_axis_pass) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  for (const char* line : {"reduce shape=5x6x7 axes=1 kind=sum keepdims=1 dt=f32",
                           "reduce shape=5x6x7 axes=0x1x2 kind=max dt=f32",
                           "reduce shape=3x0x2 axes=1 kind=sum dt=f32"}) {  // empty: oneDNN writes 0
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
  // bf16 passes where oneDNN has bf16 primitives, and is refused in oneDNN's words elsewhere.
  const char* bf16 = "layer_norm shape=3x5 norm_axes=2 affine=0 dt=bf16:f32:bf16";
  const case_result r = opval::run_case(opval::parse_problem(bf16), *b, {});
  if (opval::testing::onednn_isa_of(*b).bf16) {
    EXPECT_EQ(r.v.st, state::passed) << bf16 << ": " << r.v.reason;
  } else {
    EXPECT_EQ(r.v.st, state::skipped) << bf16 << ": " << r.v.reason;
    EXPECT_NE(r.v.reason.find("could not create a primitive descriptor"), std::string::npos) << r.v.reason;
  }
}

TEST(onednn_norm_reduce, planted_output_perturbation_is_caught) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_perturbation_caught("onednn", ops(), opval::testing::onednn_isa_of(*b).bf16 ? 20 : 12);
}

}  // namespace
