// The onednn backend's pooling (max_pool2d, avg_pool2d, global_avg_pool through pooling_v2)
// against their smoke and regression suites: every case PASSES or is refused with a reason,
// enough cases really run, the known disagreement (NaN dropped by pooling_max) still
// disagrees, ceil_mode windows and dilation map onto oneDNN's right padding and
// 0-based dilation, the verdict names oneDNN's kernel, what oneDNN would divide differently is
// refused, and a backend that perturbs one output element is caught. Skipped when opval was
// built without oneDNN.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend_testing.hpp"
#include "opval/backend.hpp"
#include "opval/runner.hpp"

namespace {

using opval::case_result;
using opval::state;

const std::vector<std::string>& ops() {
  static const std::vector<std::string> o{"max_pool2d", "avg_pool2d", "global_avg_pool"};
  return o;
}

// The cases tests/known_failures.txt lists for oneDNN 2.6.3 (here: pooling_max drops NaN).
const std::set<std::string>& known() {
  static const std::set<std::string> s = opval::testing::known_failures_of("onednn");
  return s;
}

TEST(onednn_pool, suites_pass_or_are_refused_with_a_reason) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_passed_or_refused(opval::testing::suite_results(*b, ops(), known()));
}

TEST(onednn_pool, each_op_really_runs) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  // Fewer where oneDNN has no bf16 primitives (below avx512_core) and those cases are SKIPPED.
  const std::map<std::string, int> min = opval::testing::onednn_isa_of(*b).bf16
                                             ? std::map<std::string, int>{{"max_pool2d", 40}, {"avg_pool2d", 20}, {"global_avg_pool", 12}}
                                             : std::map<std::string, int>{{"max_pool2d", 40}, {"avg_pool2d", 10}, {"global_avg_pool", 8}};
  opval::testing::expect_min_passed(opval::testing::suite_results(*b, ops(), known()), min);
}

TEST(onednn_pool, known_disagreements_still_disagree) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_known_failures_still_fail(*b, known(), ops());
}

TEST(onednn_pool, ceil_mode_dilation_and_layouts_run_and_name_the_kernel) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  for (const char* line : {"max_pool2d mb=1 c=8 ih=10 iw=7 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 ceil_mode=1 dt=f32",
                           "max_pool2d mb=1 c=4 ih=12 iw=12 kh=3 kw=3 sh=1 sw=1 pt=2 pb=2 pl=2 pr=2 dh=2 dw=2 dt=f32",
                           "max_pool2d mb=2 c=16 ih=9 iw=9 kh=3 kw=3 sh=2 sw=2 layout=nhwc dt=i8:i32:i8",
                           "avg_pool2d mb=1 c=8 ih=10 iw=7 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 ceil_mode=1 dt=f32",
                           "avg_pool2d mb=1 c=8 ih=9 iw=9 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 count_include_pad=1 dt=f32",
                           "global_avg_pool mb=2 c=64 ih=7 iw=7 layout=nhwc dt=f32"}) {
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
    EXPECT_NE(r.exec.implementation.find("oneDNN"), std::string::npos) << r.exec.implementation;
  }
}

TEST(onednn_pool, refuses_what_it_would_compute_differently) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  const auto refusal = [&](const char* line) { return opval::testing::unimplemented_reason(*b, line); };
  // ih=10, 3x3/2 padded 1, ceil_mode: the last window reaches one row past the padding.
  EXPECT_NE(refusal("avg_pool2d ih=10 iw=10 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 ceil_mode=1 count_include_pad=1")
                .find("divides it by kh*kw"),
            std::string::npos);
  EXPECT_NE(refusal("avg_pool2d dt=f16:f16:f16").find("f16"), std::string::npos);
}

TEST(onednn_pool, planted_output_perturbation_is_caught) {
  OPVAL_BACKEND_OR_SKIP(b, "onednn");
  opval::testing::expect_perturbation_caught("onednn", ops(), opval::testing::onednn_isa_of(*b).bf16 ? 20 : 12);
}

}  // namespace
