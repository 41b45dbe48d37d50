// layer_norm's statistics outputs (stats=1: mean and inv_std per row, as PyTorch's
// native_layer_norm): hand-computed values, their shapes and types, legitimate kernels
// (Welford, other summation orders) passing at seeds 1..8, and planted bugs in inv_std
// (1/(var + eps) without the square root, eps left out) and in the mean caught at seeds 1..8.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/common_norm/norm_common.hpp"
#include "ops/norm_testing.hpp"
#include "ops/op_testing.hpp"

namespace {

using namespace opval;
namespace ot = opval::testing;
using opval::ops::norm::kernel_variant;
using opval::ops::norm::variance_algo;
using opval::ops::reduce::sum_order;

constexpr std::uint64_t seeds = 8;

TEST(layer_norm, stats_hand_computed) {
  ot::direct_case c = ot::filled_case("layer_norm shape=2x4 eps=0 affine=0 stats=1 dt=f32");
  c.in[0].assign(std::vector<double>{1, 2, 3, 4, -2, -2, 2, 2});
  c.run_reference();
  EXPECT_EQ(c.ref[1].to_vector(), (std::vector<double>{2.5, 0.0}));
  const std::vector<double> r = c.ref[2].to_vector();
  EXPECT_NEAR(r[0], 1 / std::sqrt(1.25), 1e-15);
  EXPECT_NEAR(r[1], 0.5, 1e-15);
}

TEST(layer_norm, stats_outputs_are_acc_per_row_keepdim) {
  const problem p = parse_problem("layer_norm shape=3x4x5 norm_axes=2 stats=1 dt=bf16:f32:bf16");
  const auto out = p.spec().outputs(p);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].name, "mean");
  EXPECT_EQ(out[2].name, "inv_std");
  EXPECT_EQ(out[1].shape, (dims{3, 1, 1}));
  EXPECT_EQ(out[2].type, dtype::f32);
  EXPECT_EQ(p.spec().outputs(parse_problem("layer_norm shape=3x4x5")).size(), 1u);
}

TEST(layer_norm, stats_suite_passes_under_sim) {
  auto sim = make_backend("sim");
  int stats_cases = 0;
  for (const auto& lp : suite_problems("regression", {"layer_norm"})) {
    if (lp.prob.to_string().find("stats=1") == std::string::npos) continue;
    ++stats_cases;
    const case_result r = run_case(lp.prob, *sim, run_options{}, lp.source);
    EXPECT_EQ(r.v.st, state::passed) << r.descriptor << ": " << r.v.reason;
  }
  EXPECT_GE(stats_cases, 4);
}

// eps large enough to show against every row's variance (the default fill scales rows by up
// to 4: var up to 16); with eps = 1e-5 a row set without small rows hides a missing eps
// (relative effect eps/2var ~ 3e-7), which is as it should be: the output is then right.
const std::vector<std::string> stats_lines{
    "layer_norm shape=8x64 eps=0.01 stats=1 dt=f32",
    "layer_norm shape=6x97 eps=1e-3 stats=1 dt=bf16:f32:bf16",
    "layer_norm shape=2x3x40 norm_axes=2 eps=0.1 affine=0 stats=1 dt=f16:f32:f16",
};

// A kernel: the family's with algorithm choices v, then `patch` applied to (mean, inv_std)
// of each row (with the problem's eps).
ot::kernel_fn stats_kernel(kernel_variant v, std::function<void(double eps, double& mean, double& inv_std)> patch = {}) {
  return [=](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    ops::norm::norm_of(p).simulate_with(p, in, out, v);
    if (!patch) return;
    std::vector<double> mean = out[1].to_vector(), rstd = out[2].to_vector();
    for (std::size_t r = 0; r < mean.size(); ++r) patch(p.get_real("eps"), mean[r], rstd[r]);
    out[1].assign(mean);
    out[2].assign(rstd);
  };
}

void expect_at_every_seed(const std::string& name, const ot::kernel_fn& k, state want) {
  ot::function_backend b(name, k);
  for (const auto& line : stats_lines)
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      const case_result r = ot::run_with(line, b, seed);
      EXPECT_EQ(r.v.st, want) << name << " seed " << seed << ": " << line << ": " << r.v.reason;
    }
}

TEST(layer_norm, stats_of_legitimate_kernels_pass_at_every_seed) {
  for (const auto& v : {kernel_variant{variance_algo::welford, sum_order::forward},
                        kernel_variant{variance_algo::two_pass, sum_order::pairwise},
                        kernel_variant{variance_algo::two_pass, sum_order::reversed}})
    expect_at_every_seed("variant", stats_kernel(v), state::passed);
}

TEST(layer_norm, inv_std_without_square_root_fails_at_every_seed) {
  // 1/(var + eps) instead of 1/sqrt(var + eps).
  expect_at_every_seed("inv_var", stats_kernel({}, [](double, double&, double& r) { r = r * r; }), state::failed);
}

TEST(layer_norm, inv_std_without_eps_fails_at_every_seed) {
  // 1/sqrt(var): var = 1/r^2 - eps, in double so that only eps is missing.
  expect_at_every_seed("no_eps",
                       stats_kernel({}, [](double eps, double&, double& r) { r = 1 / std::sqrt(1 / (r * r) - eps); }),
                       state::failed);
}

TEST(layer_norm, mean_of_one_element_too_few_fails_at_every_seed) {
  // sum / (n + 1): a mean divided by the wrong count (its row of 64 to 240 elements).
  expect_at_every_seed("mean_count", stats_kernel({}, [](double, double& m, double&) { m *= 64.0 / 65.0; }),
                       state::failed);
}

}  // namespace
