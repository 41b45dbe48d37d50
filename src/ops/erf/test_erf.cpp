// erf: the semantics of special values, the contract emulation within the bound on every
// suite, legitimately different kernels passing (off by the claimed ulps, erfc-based where
// |x| is large) and planted bugs failing with an explanation: 1 - erfc(x) near zero, clamping
// too early, a lost sign, NaN flushed to zero.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ops/common_eltwise/eltwise_math.hpp"
#include "ops/eltwise_testing.hpp"
#include "ops/op_testing.hpp"

namespace {

using namespace opval;
namespace ot = opval::testing;
using ot::expect_fails;
using ot::function_backend;

using ot::elementwise_kernel;

TEST(erf, special_values) {
  const problem p = parse_problem("erf shape=6 dt=f32");
  const double inf = std::numeric_limits<double>::infinity();
  const ot::direct_case c = ot::run_on_values(p, {std::nan(""), inf, -inf, -0.0, 0.5, -20});
  const std::vector<double> ref = c.ref[0].to_vector();
  EXPECT_TRUE(std::isnan(ref[0]));
  EXPECT_EQ(ref[1], 1.0);
  EXPECT_EQ(ref[2], -1.0);
  EXPECT_EQ(ref[3], 0.0);
  EXPECT_TRUE(std::signbit(ref[3]));
  EXPECT_DOUBLE_EQ(ref[4], std::erf(0.5));
  EXPECT_EQ(ref[5], -1.0);
  EXPECT_EQ(c.out[0].at(4), static_cast<double>(static_cast<float>(std::erf(0.5))));  // correctly rounded
}

TEST(erf, sim_within_bound_on_suites) { ot::expect_within_bound_on_suites("erf"); }

TEST(erf, suites_pass_under_sim) {
  for (const char* tag : {"smoke", "regression"}) ot::expect_suite_passes_under_sim(tag, {"erf"});
}

// The bound is not vacuous: a correctly rounded f32 kernel uses a good part of it.
TEST(erf, bound_is_tight_on_normal_fill) {
  const ot::direct_case c = ot::run_direct(parse_problem("erf shape=4099 dt=f32:f32:f32 fill=normal"));
  const double ratio = ot::checked_worst_ratio(c);
  EXPECT_GT(ratio, 0.05);
  EXPECT_LE(ratio, 1.0);
}

// erf off by the full claimed ulps (ulps.erf, 2 by default) in either direction: must pass.
TEST(erf, worst_case_ulp_kernels_pass) {
  for (double dir : {-1.0, 1.0}) {
    function_backend b("erf off by the claimed ulps",
                       ot::off_by_claimed_ulps([](double x) { return std::erf(x); },
                                               [](const problem& p) { return p.dt.ulps.erf; }, dir));
    for (const char* dt : {"f32", "bf16:f32:bf16", "f16:f16:f16"})
      for (const char* fill : {"default", "large", "uniform", "wide"}) {
        const std::string line = std::string("erf shape=30011 dt=") + dt + " fill=" + fill;
        const case_result r = ot::run_with(line, b);
        EXPECT_EQ(r.v.st, state::passed) << "dir " << dir << ": " << line << ": " << r.v.reason;
      }
  }
}

// erf directly near zero and 1 - erfc(|x|) (signed) beyond 1, where no cancellation costs
// accuracy: a common split, passes.
TEST(erf, erfc_for_large_arguments_passes) {
  function_backend b("erf_split", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                       if (std::isnan(x) || std::fabs(x) < 1) return s.fn(std::erf(x));
                       return std::copysign(s.add(1.0, -s.fn(std::erfc(std::fabs(x)))), x);
                     }));
  for (const char* line : {"erf shape=4099 dt=f32:f32:f32", "erf shape=4099 dt=f32:f32:f32 fill=wide",
                           "erf shape=4099 dt=f32:f32:f32 fill=special", "erf shape=257 dt=bf16:f32:bf16"}) {
    const case_result r = ot::run_with(line, b);
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

// 1 - erfc(x) everywhere: cancels for small |x|, losing its relative accuracy.
TEST(erf, one_minus_erfc_near_zero_fails) {
  expect_fails("erf_one_minus_erfc", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 return s.add(1.0, -s.fn(std::erfc(x)));
               }),
               {"erf shape=4099 dt=f32:f32:f32 fill=wide", "erf shape=4099 dt=f32:f32:f32 fill=normal"});
}

// Clamping to +-1 from |x| >= 2 (erf(2) = 0.99532: 39000 f32 ulps away).
TEST(erf, clamping_too_early_fails) {
  expect_fails("erf_clamp_2", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 return std::fabs(x) >= 2 ? std::copysign(1.0, x) : s.fn(std::erf(x));
               }),
               {"erf shape=4099 dt=f32:f32:f32", "erf shape=4099 dt=f32:f32:f32 fill=uniform"});
}

TEST(erf, lost_sign_fails) {
  expect_fails("erf_abs", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 return s.fn(std::erf(std::fabs(x)));
               }),
               {"erf shape=4099 dt=f32:f32:f32", "erf shape=257 dt=bf16:f32:bf16", "erf shape=31 dt=f16:f16:f16"});
}

TEST(erf, nan_flushed_to_zero_fails) {
  expect_fails("erf_nan_to_zero", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 return std::isnan(x) ? 0.0 : s.fn(std::erf(x));
               }),
               {"erf shape=4099 dt=f32:f32:f32 fill=special"}, "NaN");
}

}  // namespace
