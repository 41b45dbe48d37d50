// group_norm: hand-computed values, the geometry (channels-last agrees with NCHW, groups=1 is
// a layer_norm over the channels and spatial dims, parameters are per channel), the contract
// emulation within the bound on every suite, legitimate kernels passing (Welford, other
// summation orders) and planted bugs failing with an explanation: groups formed from the
// wrong channels, parameters per group instead of per channel, a channels-last tensor read as
// NCHW, the wrong eps, an all-zero output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/common_norm/norm_common.hpp"
#include "ops/group_norm/group_norm.hpp"
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


tensor tensor_of(dtype t, dims shape, const std::vector<double>& values) {
  tensor x(t, std::move(shape));
  x.assign(values);
  return x;
}

/// A kernel that runs sim on rearranged inputs and writes its results back rearranged:
/// `source(b, c, s)` names the logical element (b, c', s') of x (and the channel of gamma and
/// beta) that the buggy kernel reads as (b, c, s), and it writes its (b, c, s) result there.
/// The rearranged copies are contiguous NCHW: the bug is in which elements meet, not in strides.
using element_map = std::function<std::int64_t(const ops::group_norm::group_norm_params&, std::int64_t c,
                                                std::int64_t s)>;  // -> c' * spatial + s'
using channel_map = std::function<std::int64_t(const ops::group_norm::group_norm_params&, std::int64_t c)>;

ot::kernel_fn rearranged_kernel(element_map element, channel_map param_channel) {
  return [=](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const auto g = ops::group_norm::params_of(p);
    const std::int64_t per_sample = g.channels * g.spatial;
    const std::vector<double> x = in[0].to_vector();
    std::vector<double> moved(x.size());
    for (std::int64_t b = 0; b < g.batch; ++b)
      for (std::int64_t c = 0; c < g.channels; ++c)
        for (std::int64_t s = 0; s < g.spatial; ++s)
          moved[b * per_sample + c * g.spatial + s] = x[b * per_sample + element(g, c, s)];
    std::vector<tensor> args{tensor_of(in[0].type(), in[0].shape(), moved)};
    for (std::size_t k = 1; k < in.size(); ++k) {
      const std::vector<double> v = in[k].to_vector();
      std::vector<double> w(v.size());
      for (std::int64_t c = 0; c < g.channels; ++c) w[c] = v[param_channel(g, c)];
      args.push_back(tensor_of(in[k].type(), in[k].shape(), w));
    }
    std::vector<tensor> y{tensor(out[0].type(), out[0].shape())};
    ops::norm::norm_of(p).simulate_with(p, args, y, {});
    const std::vector<double> r = y[0].to_vector();
    for (std::int64_t b = 0; b < g.batch; ++b)
      for (std::int64_t c = 0; c < g.channels; ++c)
        for (std::int64_t s = 0; s < g.spatial; ++s)
          out[0].set_at(b * per_sample + element(g, c, s), r[b * per_sample + c * g.spatial + s]);
  };
}

std::int64_t same_channel(const ops::group_norm::group_norm_params&, std::int64_t c) { return c; }

TEST(group_norm, hand_computed_per_channel_parameters) {
  // Two groups of two channels, no spatial dim: rows (1, 3) and (10, 14) normalize to (-1, 1).
  const problem p = parse_problem("group_norm shape=1x4 groups=2 eps=0 dt=f32");
  std::vector<tensor> in{tensor_of(dtype::f32, {1, 4}, {1, 3, 10, 14}), tensor_of(dtype::f32, {4}, {1, 2, 3, 4}),
                         tensor_of(dtype::f32, {4}, {0, 0.5, 0, -1})};
  const direct_case c = ot::run_direct(p, 1, in);
  EXPECT_EQ(c.ref[0].to_vector(), (std::vector<double>{-1, 2.5, -3, 3}));
  EXPECT_LE(ot::checked_worst_ratio(c), 1.0);
  // One group of two channels of two spatial elements each: gamma per channel, repeated.
  const problem q = parse_problem("group_norm shape=1x2x2 groups=1 eps=0 dt=f32");
  std::vector<tensor> qin{tensor_of(dtype::f32, {1, 2, 2}, {0, 2, 4, 6}), tensor_of(dtype::f32, {2}, {1, 10}),
                          tensor_of(dtype::f32, {2}, {0, 0})};
  const direct_case d = ot::run_direct(q, 1, qin);
  const double r5 = std::sqrt(5.0);
  const std::vector<double> want{-3 / r5, -1 / r5, 10 / r5, 30 / r5};
  const std::vector<double> got = d.ref[0].to_vector();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-15 * 30) << i;
}

TEST(group_norm, channels_last_agrees_with_nchw) {
  for (const char* dt : {"f32", "bf16:f32:bf16"}) {
    const std::string base = std::string("group_norm shape=2x6x3x5 groups=3 dt=") + dt;
    const direct_case nchw = norm_case(base);
    const direct_case nhwc = norm_case(base + " layout=nhwc");
    EXPECT_EQ(nhwc.in[0].strides(), (dims{90, 1, 30, 6}));
    EXPECT_EQ(nhwc.out[0].strides(), (dims{90, 1, 30, 6}));
    EXPECT_EQ(nhwc.in[0].to_vector(), nchw.in[0].to_vector());
    EXPECT_EQ(nhwc.ref[0].to_vector(), nchw.ref[0].to_vector());
    EXPECT_EQ(nhwc.out[0].to_vector(), nchw.out[0].to_vector());
  }
  // 3-D spatial: C innermost, then D, H, W.
  EXPECT_EQ(norm_case("group_norm shape=1x4x2x3x5 groups=2 layout=nhwc dt=f32").in[0].strides(),
            (dims{120, 1, 60, 20, 4}));
}

TEST(group_norm, one_group_is_a_layer_norm_over_channels_and_space) {
  const direct_case gn = norm_case("group_norm shape=2x4x4x4 groups=1 affine=0 eps=1e-3 dt=f32");
  const direct_case ln = norm_case("layer_norm shape=2x64 affine=0 eps=1e-3 dt=f32");
  EXPECT_EQ(gn.in[0].to_vector(), ln.in[0].to_vector());
  EXPECT_EQ(gn.ref[0].to_vector(), ln.ref[0].to_vector());
  EXPECT_EQ(gn.out[0].to_vector(), ln.out[0].to_vector());
}

TEST(group_norm, validation_names_the_problem) {
  EXPECT_NE(ot::validation_error("group_norm shape=2x8x4x4 groups=3").find("groups=3 does not divide the 8 channels"),
            std::string::npos);
  EXPECT_NE(ot::validation_error("group_norm shape=8 groups=1").find("N x C"), std::string::npos);
  EXPECT_NE(ot::validation_error("group_norm shape=2x-1x4 groups=1").find("dimensions like"), std::string::npos);
  EXPECT_EQ(ot::validation_error("group_norm shape=0x8x4 groups=2"), "");  // an empty batch
  EXPECT_NE(ot::validation_error("group_norm shape=2x8 groups=0").find("groups"), std::string::npos);
  EXPECT_NE(ot::validation_error("group_norm shape=2x8 layout=nhcw").find("layout"), std::string::npos);
  EXPECT_NE(ot::validation_error("group_norm shape=2x8 groups=2 eps=-1").find("eps"), std::string::npos);
  EXPECT_NE(ot::validation_error("group_norm shape=2x8 groups=2 dt=f16:f16:f16").find("does not support contract"),
            std::string::npos);
  EXPECT_EQ(ot::validation_error("group_norm shape=2x8x3 groups=4 layout=nhwc dt=bf16:f32:bf16 fill=constant_rows"), "");
}

// Every suite line: sim within the bound.
TEST(group_norm, sim_within_bound_on_suites) { ot::expect_within_bound_on_suites("group_norm", norm_variant_kernel({})); }

// The bound is tight where rounding errors are random: f32 output, default fill.
TEST(group_norm, bound_is_tight_on_default_fill) {
  for (const char* line :
       {"group_norm shape=2x32x8x8 groups=8 dt=f32", "group_norm shape=1x64x16x16 groups=32 layout=nhwc dt=f32"}) {
    const double ratio = ot::checked_worst_ratio(norm_case(line));
    EXPECT_GT(ratio, 0.003) << line;
    EXPECT_LE(ratio, 1.0) << line;
  }
}

// Legitimately different kernels stay within the bound: Welford (as a kernel merging spatial
// tiles does), reversed and pairwise sums, in either layout.
TEST(group_norm, other_algorithms_within_bound) {
  const std::vector<kernel_variant> variants{{variance_algo::welford, sum_order::forward},
                                             {variance_algo::welford, sum_order::reversed},
                                             {variance_algo::two_pass, sum_order::reversed},
                                             {variance_algo::two_pass, sum_order::pairwise}};
  for (const char* line : {"group_norm shape=2x32x8x8 groups=8 eps=1e-12 dt=f32 fill=cancel",
                           "group_norm shape=2x12x6x6 groups=4 layout=nhwc dt=bf16:f32:bf16 fill=wide",
                           "group_norm shape=3x8x5x5 groups=8 eps=0.1 dt=f16:f32:f16 fill=constant_rows",
                           "group_norm shape=1x16x9x9 groups=1 affine=0 dt=f32 fill=positive"})
    for (const auto& v : variants)
      for (std::uint64_t seed : {1, 2}) {
        const direct_case c = norm_case(line, seed, v);
        EXPECT_LE(ot::checked_worst_ratio(c), 1.0) << line << " variant " << int(v.variance) << "/" << int(v.order);
      }
}

// ---------------------------------------------------------------------------------------------
// End to end through run_case

TEST(group_norm, suites_pass_under_sim) {
  for (const char* tag : {"smoke", "regression"}) ot::expect_suite_passes_under_sim(tag, {"group_norm"});
}

TEST(group_norm, legitimate_kernels_pass) {
  for (const auto& v : {kernel_variant{variance_algo::welford, sum_order::forward},
                        kernel_variant{variance_algo::two_pass, sum_order::pairwise}}) {
    function_backend b("variant", norm_variant_kernel(v));
    for (const char* line : {"group_norm shape=2x32x8x8 groups=8 dt=f32",
                             "group_norm shape=2x12x6x6 groups=4 layout=nhwc dt=bf16:f32:bf16 fill=cancel",
                             "group_norm shape=4x6 groups=3 eps=0.1 dt=f16:f32:f16"}) {
      const case_result r = ot::run_with(line, b);
      EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
    }
  }
}

/// Runs `k` as a backend on each line: every case must fail beyond the bound.
const std::vector<std::string> bug_lines{"group_norm shape=2x16x5x5 groups=4 dt=f32",
                                         "group_norm shape=2x16x5x5 groups=4 layout=nhwc dt=bf16:f32:bf16",
                                         "group_norm shape=3x12x7 groups=3 dt=f16:f32:f16"};

// Groups of the channels c with equal c mod groups (strided instead of consecutive): a kernel
// that indexes channels-last data as if groups were interleaved.
TEST(group_norm, groups_of_the_wrong_channels_fail) {
  const element_map interleaved = [](const ops::group_norm::group_norm_params& g, std::int64_t c, std::int64_t s) {
    const std::int64_t per_group = g.channels / g.groups;
    return ((c % per_group) * g.groups + c / per_group) * g.spatial + s;
  };
  const channel_map param = [](const ops::group_norm::group_norm_params& g, std::int64_t c) {
    const std::int64_t per_group = g.channels / g.groups;
    return (c % per_group) * g.groups + c / per_group;
  };
  ot::expect_fails("interleaved_groups", rearranged_kernel(interleaved, param), bug_lines);
}

// gamma and beta of the group's first channel for all its channels (one parameter per group).
TEST(group_norm, parameters_per_group_fail) {
  const element_map same = [](const ops::group_norm::group_norm_params& g, std::int64_t c, std::int64_t s) {
    return c * g.spatial + s;
  };
  const channel_map group_first = [](const ops::group_norm::group_norm_params& g, std::int64_t c) {
    const std::int64_t per_group = g.channels / g.groups;
    return c / per_group * per_group;
  };
  ot::expect_fails("per_group_params", rearranged_kernel(same, group_first), bug_lines);
}

// A kernel that ignores the strides: reads and writes channels-last memory as if it were NCHW.
TEST(group_norm, channels_last_read_as_nchw_fails) {
  const element_map memory_order = [](const ops::group_norm::group_norm_params& g, std::int64_t c, std::int64_t s) {
    // The (c, s) the kernel means sits at memory offset c * spatial + s of the sample, which
    // channels-last holds the element of channel m % C at spatial position m / C.
    const std::int64_t m = c * g.spatial + s;
    return (m % g.channels) * g.spatial + m / g.channels;
  };
  ot::expect_fails("strides_ignored", rearranged_kernel(memory_order, same_channel),
                            {"group_norm shape=2x16x5x5 groups=4 layout=nhwc dt=f32",
                             "group_norm shape=1x12x3x4 groups=3 layout=nhwc dt=bf16:f32:bf16"});
}

TEST(group_norm, wrong_eps_fails) {
  ot::expect_fails("eps_1e-5", norm_variant_kernel({variance_algo::two_pass, sum_order::forward, 1e-5}),
                            {"group_norm shape=2x16x3x3 groups=16 eps=0.01 dt=f32",
                             "group_norm shape=2x8x4 groups=4 eps=0.1 layout=nhwc dt=bf16:f32:bf16"});
}

TEST(group_norm, nan_skipping_fails) {
  // The special fill's NaN must make its group NaN. Small groups, no gamma and beta: a group
  // that also holds an infinity, or a channel whose gamma is NaN, is NaN either way.
  ot::expect_fails("nan_skipped", ot::simulating_on([](const problem&, std::vector<tensor>& x) { x[0] = ot::nans_as_zero(x[0]); }),
                   {"group_norm shape=2x32x4x4 groups=32 affine=0 dt=f32 fill=special",
                    "group_norm shape=2x32x4x4 groups=32 affine=0 layout=nhwc dt=bf16:f32:bf16 fill=special"},
                   "NaN");
}

TEST(group_norm, all_zero_output_is_mistrusted) {
  function_backend zeros("zeros", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    out[0].assign(std::vector<double>(static_cast<std::size_t>(out[0].numel()), 0.0));
  });
  EXPECT_EQ(ot::run_with("group_norm shape=2x16x4x4 groups=4 dt=f32", zeros).v.st, state::mistrusted);
}

}  // namespace
