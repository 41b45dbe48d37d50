// tanh: the semantics of special values, the contract emulation within the bound on every
// suite, a legitimately different kernel passing (expm1-based, clamped where tanh rounds to
// +-1) and planted bugs failing with an explanation: the cancelling exp formula, clamping too
// early, a lost sign, NaN flushed to zero.
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

TEST(tanh, special_values) {
  const problem p = parse_problem("tanh shape=6 dt=f32");
  const double inf = std::numeric_limits<double>::infinity();
  const ot::direct_case c = ot::run_on_values(p, {std::nan(""), inf, -inf, -0.0, 0.5, -20});
  const std::vector<double> ref = c.ref[0].to_vector();
  EXPECT_TRUE(std::isnan(ref[0]));
  EXPECT_EQ(ref[1], 1.0);
  EXPECT_EQ(ref[2], -1.0);
  EXPECT_EQ(ref[3], 0.0);
  EXPECT_TRUE(std::signbit(ref[3]));
  EXPECT_DOUBLE_EQ(ref[4], std::tanh(0.5));
  EXPECT_EQ(ref[5], -1.0);
  EXPECT_EQ(c.out[0].at(4), static_cast<double>(static_cast<float>(std::tanh(0.5))));  // correctly rounded
}

// Every suite line: sim within the bound.
TEST(tanh, sim_within_bound_on_suites) { ot::expect_within_bound_on_suites("tanh"); }

TEST(tanh, suites_pass_under_sim) {
  for (const char* tag : {"smoke", "regression"}) ot::expect_suite_passes_under_sim(tag, {"tanh"});
}

// The bound is not vacuous: a correctly rounded f32 kernel uses a good part of it.
TEST(tanh, bound_is_tight_on_normal_fill) {
  const ot::direct_case c = ot::run_direct(parse_problem("tanh shape=4099 dt=f32:f32:f32 fill=normal"));
  const double ratio = ot::checked_worst_ratio(c);
  EXPECT_GT(ratio, 0.05);
  EXPECT_LE(ratio, 1.0);
}

const std::vector<std::string> f32_acc_lines{"tanh shape=4099 dt=f32:f32:f32", "tanh shape=4099 dt=f32:f32:f32 fill=wide",
                                             "tanh shape=4099 dt=f32:f32:f32 fill=large", "tanh shape=257 dt=bf16:f32:bf16 fill=normal"};

// expm1-based: t = expm1(2|x|), y = sign(x) t / (t + 2), three roundings in acc, and +-1 once
// tanh rounds there (|x| >= 9.1 in f32). Accurate near zero: no cancellation.
TEST(tanh, expm1_kernel_passes) {
  function_backend b("tanh_expm1", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                       const double a = std::fabs(x);
                       if (std::isnan(x)) return x;
                       if (a >= 9.1) return std::copysign(1.0, x);
                       const double t = s.fn(std::expm1(2 * a));
                       return std::copysign(s.div(t, s.add(t, 2.0)), x);
                     }));
  for (const auto& line : f32_acc_lines) {
    const case_result r = ot::run_with(line, b);
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

// A kernel whose tanh is off by the full claimed ulps (ulps.tanh, 2 by default) in either
// direction, computed in acc: the bound must hold (soundness with a 2-ulp tanhf).
TEST(tanh, worst_case_ulp_kernels_pass) {
  for (double dir : {-1.0, 1.0}) {
    function_backend b("tanh off by the claimed ulps",
                       ot::off_by_claimed_ulps([](double x) { return std::tanh(x); },
                                               [](const problem& p) { return p.dt.ulps.tanh; }, dir));
    for (const char* dt : {"f32", "bf16:f32:bf16", "f16:f16:f16"})
      for (const char* fill : {"default", "large", "uniform", "wide"}) {
        const std::string line = std::string("tanh shape=30011 dt=") + dt + " fill=" + fill;
        const case_result r = ot::run_with(line, b);
        EXPECT_EQ(r.v.st, state::passed) << "dir " << dir << ": " << line << ": " << r.v.reason;
      }
  }
}

// (1 - e^-2x) / (1 + e^-2x): 1 - e^-2x cancels for small |x|, losing its relative accuracy.
TEST(tanh, cancelling_exp_formula_fails) {
  expect_fails("tanh_exp_formula", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 if (std::fabs(x) >= 9.1) return std::copysign(1.0, x);
                 const double e = s.fn(std::exp(-2 * x));
                 return s.div(s.add(1.0, -e), s.add(1.0, e));
               }),
               {"tanh shape=4099 dt=f32:f32:f32", "tanh shape=4099 dt=f32:f32:f32 fill=normal"});
}

// Clamping to +-1 from |x| >= 4 (tanh(4) = 0.99933: 11000 f32 ulps away).
TEST(tanh, clamping_too_early_fails) {
  expect_fails("tanh_clamp_4", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 return std::fabs(x) >= 4 ? std::copysign(1.0, x) : s.fn(std::tanh(x));
               }),
               {"tanh shape=4099 dt=f32:f32:f32 fill=large", "tanh shape=4099 dt=f32:f32:f32 fill=wide"});
}

// tanh(|x|): the odd symmetry lost.
TEST(tanh, lost_sign_fails) {
  expect_fails("tanh_abs", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 return s.fn(std::tanh(std::fabs(x)));
               }),
               {"tanh shape=4099 dt=f32:f32:f32", "tanh shape=257 dt=bf16:f32:bf16", "tanh shape=31 dt=f16:f16:f16"});
}

// NaN in, 0 out: the contract propagates NaN.
TEST(tanh, nan_flushed_to_zero_fails) {
  expect_fails("tanh_nan_to_zero", elementwise_kernel([](double x, const ops::eltwise::acc_steps& s) {
                 return std::isnan(x) ? 0.0 : s.fn(std::tanh(x));
               }),
               {"tanh shape=4099 dt=f32:f32:f32 fill=special"}, "NaN");
}

}  // namespace
