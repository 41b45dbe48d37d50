// layer_norm and rms_norm: hand-computed values, metamorphic properties of the reference,
// the contract emulation within the error bound (also for Welford and other summation
// orders), and end-to-end verdicts: the suites pass under sim, planted bugs fail.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "opval/error.hpp"
#include "ops/common_norm/norm_common.hpp"
#include "ops/norm_testing.hpp"

namespace {

using namespace opval;
using opval::ops::norm::kernel_variant;
using opval::ops::norm::variance_algo;
using opval::ops::reduce::sum_order;

namespace ot = opval::testing;
using ot::direct_case;
using ot::norm_case;
using ot::norm_variant_kernel;
using ot::function_backend;

std::vector<double> values(const tensor& t) { return t.to_vector(); }

// ---------------------------------------------------------------------------------------------

TEST(norms, hand_computed_layer_norm) {
  direct_case c = norm_case("layer_norm shape=1x4 eps=0 affine=1 dt=f32");
  c.in[0].assign(std::vector<double>{1, 2, 3, 4});
  c.in[1].assign(std::vector<double>{1, 2, 1, 1});
  c.in[2].assign(std::vector<double>{0, 0, 0, 1});
  c.p.spec().reference(c.p, c.in, c.ref);
  const double s = std::sqrt(1.25);  // mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4
  const std::vector<double> expected{-1.5 / s, 2 * -0.5 / s, 0.5 / s, 1.5 / s + 1};
  const auto got = values(c.ref[0]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-15);
}

TEST(norms, hand_computed_rms_norm) {
  direct_case c = norm_case("rms_norm shape=1x4 eps=0.5 affine=1 dt=f32");
  c.in[0].assign(std::vector<double>{1, -2, 3, 4});
  c.in[1].assign(std::vector<double>{1, 1, 2, 1});
  c.p.spec().reference(c.p, c.in, c.ref);
  const double r = 1 / std::sqrt(7.5 + 0.5);  // mean square (1 + 4 + 9 + 16) / 4 = 7.5
  const std::vector<double> expected{r, -2 * r, 6 * r, 4 * r};
  const auto got = values(c.ref[0]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-15);
}

TEST(norms, layer_norm_of_one_element_is_beta) {
  direct_case c = norm_case("layer_norm shape=5x1 eps=1e-5 dt=f32");
  const std::vector<double> beta(5, c.in[2].at(0));
  EXPECT_EQ(values(c.ref[0]), beta);
  EXPECT_EQ(values(c.out[0]), beta);
  EXPECT_EQ(c.p.spec().perturbed_input(c.p), 2) << "x cannot change the output here: perturb beta";
}

// The reference is invariant to shifting a row (layer_norm) and, with eps = 0, to scaling it.
TEST(norms, metamorphic_shift_and_scale) {
  for (const char* op : {"layer_norm", "rms_norm"}) {
    direct_case c = norm_case(std::string(op) + " shape=6x37 eps=0 affine=1 dt=f32");
    const auto base = values(c.ref[0]);
    std::vector<double> x = values(c.in[0]);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] *= (i / 37 + 1) * 0.75;  // per-row c > 0, exact
    if (std::string(op) == "layer_norm")
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += 3.0 * static_cast<double>(i / 37) - 7;
    tensor moved(dtype::f64, c.in[0].shape());
    moved.assign(x);
    std::vector<tensor> in = c.in;
    in[0] = moved;
    c.p.spec().reference(c.p, in, c.ref);
    const auto after = values(c.ref[0]);
    for (std::size_t i = 0; i < base.size(); ++i) EXPECT_NEAR(after[i], base[i], 1e-12 * (1 + std::fabs(base[i]))) << op;
  }
}

TEST(norms, zero_variance_rows_give_beta) {
  direct_case c = norm_case("layer_norm shape=9x40 eps=1e-5 dt=f32 fill=constant_rows");
  const auto ref = values(c.ref[0]);
  const auto beta = values(c.in[2]);
  for (std::int64_t r = 0; r < 9; r += 3)
    for (std::int64_t i = 0; i < 40; ++i) EXPECT_EQ(ref[r * 40 + i], beta[i]) << "row " << r;
  EXPECT_LE(ot::checked_worst_ratio(c), 1.0);
  // rms_norm: the all-zero rows among them normalize to exactly 0.
  direct_case z = norm_case("rms_norm shape=9x40 eps=1e-5 dt=f32 fill=constant_rows");
  for (std::int64_t i = 0; i < 40; ++i) EXPECT_EQ(z.out[0].at(3 * 40 + i), 0.0);
}

TEST(norms, padded_rows_give_the_same_result) {
  direct_case dense = norm_case("layer_norm shape=6x33 dt=bf16:f32:bf16");
  direct_case padded = norm_case("layer_norm shape=6x33 ld=40 dt=bf16:f32:bf16");
  EXPECT_EQ(padded.in[0].strides(), (dims{40, 1}));
  EXPECT_EQ(padded.out[0].strides(), (dims{40, 1}));
  EXPECT_EQ(values(padded.in[0]), values(dense.in[0]));
  EXPECT_EQ(values(padded.out[0]), values(dense.out[0]));
}

TEST(norms, validation_names_the_attribute) {
  EXPECT_NE(ot::validation_error("layer_norm shape=4x8 dt=f16:f16:f16").find("does not support contract"), std::string::npos);
  EXPECT_NE(ot::validation_error("layer_norm shape=4x8 dt=tf32").find("does not support contract"), std::string::npos);
  EXPECT_NE(ot::validation_error("rms_norm shape=4x8 norm_axes=3").find("norm_axes=3"), std::string::npos);
  EXPECT_NE(ot::validation_error("layer_norm shape=4x8 eps=-1").find("eps"), std::string::npos);
  EXPECT_NE(ot::validation_error("layer_norm shape=4x8 eps=0 fill=constant_rows").find("eps > 0"), std::string::npos);
  EXPECT_NE(ot::validation_error("layer_norm shape=4x-2").find("dimensions like"), std::string::npos);
  EXPECT_EQ(ot::validation_error("layer_norm shape=0x8"), "");  // an empty batch
  EXPECT_NE(ot::validation_error("layer_norm shape=4x8 ld=7").find("ld=7"), std::string::npos);
  EXPECT_EQ(ot::validation_error("layer_norm shape=4x3x8 norm_axes=2 dt=bf16:f32:bf16 fill=constant_rows"), "");
}

// Every suite line: sim within the bound, and the bound not vacuous where data is random.
TEST(norms, sim_within_bound_on_suites) {
  for (const char* op : {"layer_norm", "rms_norm"}) ot::expect_within_bound_on_suites(op, norm_variant_kernel({}));
}

// The bound is tight where rounding errors are random: f32 output, default fill.
TEST(norms, bound_is_tight_on_default_fill) {
  for (const char* line : {"layer_norm shape=8x768 dt=f32", "rms_norm shape=8x768 dt=f32",
                           "layer_norm shape=8x4096 dt=bf16:f32:bf16 affine=0"}) {
    direct_case c = norm_case(line);
    const double ratio = ot::checked_worst_ratio(c);
    EXPECT_GT(ratio, 0.003) << line;
    EXPECT_LE(ratio, 1.0) << line;
  }
}

// Legitimately different kernels stay within the bound: Welford, reversed and pairwise sums.
TEST(norms, other_algorithms_within_bound) {
  const std::vector<kernel_variant> variants{{variance_algo::welford, sum_order::forward},
                                             {variance_algo::welford, sum_order::reversed},
                                             {variance_algo::two_pass, sum_order::reversed},
                                             {variance_algo::two_pass, sum_order::pairwise}};
  const std::vector<std::string> lines{
      "layer_norm shape=6x4096 eps=1e-12 dt=f32 fill=cancel", "layer_norm shape=16x768 dt=f32",
      "layer_norm shape=8x1000 eps=0.1 affine=0 dt=bf16:f32:bf16 fill=wide",
      "layer_norm shape=9x257 dt=f16:f32:f16 fill=constant_rows", "rms_norm shape=8x4096 dt=f32 fill=large",
      "layer_norm shape=4x97 eps=1e-12 dt=f32 fill=positive"};
  for (const auto& line : lines)
    for (const auto& v : variants)
      for (std::uint64_t seed : {1, 2, 3}) {
        direct_case c = norm_case(line, seed, v);
        EXPECT_LE(ot::checked_worst_ratio(c), 1.0) << line << " variant " << int(v.variance) << "/" << int(v.order);
      }
}

// ---------------------------------------------------------------------------------------------
// End to end through run_case

function_backend variant_backend(kernel_variant v) { return function_backend("variant", norm_variant_kernel(v)); }

TEST(norms, suites_pass_under_sim) {
  for (const char* op : {"layer_norm", "rms_norm"})
    for (const char* tag : {"smoke", "regression"}) ot::expect_suite_passes_under_sim(tag, {op});
}

TEST(norms, legitimate_kernels_pass) {
  for (const auto& v : {kernel_variant{variance_algo::welford, sum_order::forward},
                        kernel_variant{variance_algo::two_pass, sum_order::pairwise},
                        kernel_variant{variance_algo::two_pass, sum_order::reversed}}) {
    auto b = variant_backend(v);
    for (const char* line : {"layer_norm shape=16x768 dt=f32", "layer_norm shape=4x4096 dt=bf16:f32:bf16 fill=cancel",
                             "layer_norm shape=12x33 eps=0.1 dt=f16:f32:f16 fill=constant_rows",
                             "rms_norm shape=16x768 dt=f32", "rms_norm shape=4x1000 dt=bf16:f32:bf16 affine=0"}) {
      const case_result r = ot::run_with(line, b);
      EXPECT_EQ(r.v.st, state::passed) << line << " variant " << int(v.variance) << ": " << r.v.reason;
    }
  }
}

TEST(norms, wrong_eps_fails) {
  // The kernel uses 1e-5 where the problem asks 1e-3 (or 0.1): visible on rows whose variance
  // is small (the default fill has row scales down to 1/8, variance 1/64).
  // At every seed.
  ot::expect_fails("eps_1e-5", norm_variant_kernel({variance_algo::two_pass, sum_order::forward, 1e-5}),
                   {"layer_norm shape=16x768 eps=0.001 dt=f32", "layer_norm shape=16x768 eps=0.1 dt=bf16:f32:bf16",
                    "rms_norm shape=16x257 eps=0.001 dt=f16:f32:f16"});
}

TEST(norms, all_zero_output_is_mistrusted) {
  function_backend zeros("zeros", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    out[0].assign(std::vector<double>(static_cast<std::size_t>(out[0].numel()), 0.0));
  });
  EXPECT_EQ(ot::run_with("layer_norm shape=8x64 dt=f32", zeros).v.st, state::mistrusted);
  EXPECT_EQ(ot::run_with("rms_norm shape=8x64 dt=bf16:f32:bf16", zeros).v.st, state::mistrusted);
}

TEST(norms, forgetting_gamma_or_beta_fails) {
  function_backend no_affine("no_affine", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    ops::norm::norm_of(p).simulate_with(p, in.first(1), out, {});
  });
  ot::expect_at_every_seed(no_affine, {"layer_norm shape=8x64 dt=f32", "rms_norm shape=8x64 dt=bf16:f32:bf16"}, state::failed);
}

// --- one planted bug per feature of the generated suites' table, caught at seeds 1..8 --------

TEST(norms, padded_rows_read_as_packed_fail_at_every_seed) {
  // Rows ld apart read as if they were packed.
  ot::expect_fails_at_every_seed("ld_ignored", ot::simulating_on([](const problem&, std::vector<tensor>& x) {
                                   x[0] = ot::strides_ignored(x[0]);
                                 }),
                                 {"layer_norm shape=6x13 ld=24 dt=f32", "rms_norm shape=6x13 ld=24 dt=bf16:f32:bf16",
                                  "layer_norm shape=2x4096 ld=4160 dt=f16:f32:f16"});
}

TEST(norms, last_axis_only_fails_at_every_seed) {
  // norm_axes=2 normalized over the last axis alone.
  ot::expect_fails_at_every_seed("one_axis", ot::simulating_as([](problem& q) { q.set("norm_axes", std::int64_t{1}); }),
                                 {"layer_norm shape=2x3x5x7 norm_axes=2 dt=f32", "rms_norm shape=3x4x64 norm_axes=2 dt=bf16:f32:bf16"});
}

TEST(norms, nan_skipping_fails_at_every_seed) {
  // The special fill's NaN must make its row NaN (16 rows of 13: the planted kinds 2 rows apart,
  // so the NaN's row holds no planted Inf, which would make it NaN anyway).
  ot::expect_fails_at_every_seed("nan_skipped", ot::simulating_on([](const problem&, std::vector<tensor>& x) {
                                   x[0] = ot::nans_as_zero(x[0]);
                                 }),
                                 {"layer_norm shape=16x13 dt=f32 fill=special", "rms_norm shape=4x97 dt=bf16:f32:bf16 fill=special"},
                                 "NaN");
}

// One-pass E[x^2] - E[x]^2 is not a legitimate kernel: it loses |mean|^2/var digits. The
// bound rejects it where that loss exceeds what a Welford kernel may lose (5 gamma max|x|
// max|x - mean|): short rows whose mean is thousands of times their spread.
TEST(norms, one_pass_variance_fails_on_extreme_offsets) {
  const kernel_variant one_pass{variance_algo::one_pass, sum_order::forward};
  direct_case c = norm_case("layer_norm shape=64x16 eps=1e-12 affine=0 dt=f32", 1, one_pass);
  std::vector<double> x = values(c.in[0]);
  for (double& v : x) v = static_cast<float>(4096.0 + v / 4);
  c.in[0].assign(x);
  c.recompute(norm_variant_kernel(one_pass));
  EXPECT_GT(ot::checked_worst_ratio(c), 1.0);
  for (auto algo : {variance_algo::two_pass, variance_algo::welford}) {
    c.recompute(norm_variant_kernel({algo, sum_order::forward}));
    EXPECT_LE(ot::checked_worst_ratio(c), 1.0);
  }
}

}  // namespace
