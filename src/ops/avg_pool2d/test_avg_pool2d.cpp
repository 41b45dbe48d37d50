// avg_pool2d and global_avg_pool: hand-computed means (padding, count_include_pad, ceil_mode),
// the output extents, channels-last agreeing with NCHW, the global pool agreeing with a window
// the size of the plane, the emulation within its bound on every suite, legitimate kernels
// passing (other summation orders, terms scaled before the sum) and planted bugs failing with
// an explanation: f16 accumulation, the wrong divisor, a dropped tap, truncated outputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/common_pool/mean_pool.hpp"
#include "ops/op_testing.hpp"

namespace {

using namespace opval;
namespace ot = opval::testing;
using opval::ops::pool::mean_kernel;
using opval::ops::reduce::sum_order;

std::vector<double> one_to(int n) {
  std::vector<double> v;
  for (int i = 1; i <= n; ++i) v.push_back(i);
  return v;
}

/// The reference and sim outputs of `line` on the given logical input values.
ot::direct_case on_values(const std::string& line, const std::vector<double>& x) {
  ot::direct_case c = ot::filled_case(line);
  c.in[0].assign(x);
  c.recompute();
  return c;
}

std::vector<double> reference_of(const std::string& line, const std::vector<double>& x) {
  return on_values(line, x).ref[0].to_vector();
}

TEST(avg_pool2d, hand_computed) {
  const std::vector<double> x = one_to(9);  // 3x3: 1 2 3 / 4 5 6 / 7 8 9
  EXPECT_EQ(reference_of("avg_pool2d ih=3 iw=3 kh=2 kw=2 sh=1 sw=1", x), (std::vector<double>{3, 4, 6, 7}));
  // Padding of 1 all round, 2x2 windows of stride 2: the corner window holds x[0][0] alone.
  const std::string padded = "avg_pool2d ih=3 iw=3 kh=2 kw=2 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1";
  EXPECT_EQ(reference_of(padded, x), (std::vector<double>{1, 2.5, 5.5, 7}));
  EXPECT_EQ(reference_of(padded + " count_include_pad=1", x), (std::vector<double>{0.25, 1.25, 2.75, 7}));
  // ceil_mode: a last, partial window; no padding, so both divisors count its one column.
  const std::string ceil = "avg_pool2d ih=3 iw=3 kh=2 kw=2 sh=2 sw=2 ceil_mode=1";
  EXPECT_EQ(reference_of(ceil, x), (std::vector<double>{3, 4.5, 7.5, 9}));
  EXPECT_EQ(reference_of(ceil + " count_include_pad=1", x), (std::vector<double>{3, 4.5, 7.5, 9}));
  // The sim kernel in f32 is exact on these small integers.
  EXPECT_EQ(on_values(padded, x).out[0].to_vector(), (std::vector<double>{1, 2.5, 5.5, 7}));
}

TEST(avg_pool2d, output_extents_follow_pytorch) {
  auto dst = [](const std::string& attrs) { return ot::filled_case("avg_pool2d " + attrs).out[0].shape(); };
  EXPECT_EQ(dst("mb=2 c=3 ih=8 iw=7 kh=2 kw=2 sh=2 sw=2"), (dims{2, 3, 4, 3}));
  EXPECT_EQ(dst("ih=8 iw=7 kh=2 kw=2 sh=2 sw=2 ceil_mode=1"), (dims{1, 1, 4, 4}));
  // ceil((5 + 2 - 2) / 2) + 1 = 4, but the 4th window would start in the trailing padding.
  EXPECT_EQ(dst("ih=5 iw=5 kh=2 kw=2 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 ceil_mode=1"), (dims{1, 1, 3, 3}));
  EXPECT_EQ(dst("ih=56 iw=56 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1"), (dims{1, 1, 28, 28}));
}

TEST(avg_pool2d, bad_windows_are_one_clear_error) {
  EXPECT_NE(ot::validation_error("avg_pool2d ih=3 iw=3 kh=2 kw=2 pt=2").find("reads only padding"), std::string::npos);
  EXPECT_NE(ot::validation_error("avg_pool2d ih=3 iw=3 kh=5 kw=2").find("larger than the padded input"),
            std::string::npos);
  EXPECT_NE(ot::validation_error("avg_pool2d dt=i8").find("does not support contract"), std::string::npos);
  EXPECT_NE(ot::validation_error("avg_pool2d fill=nonsense").find("fill"), std::string::npos);
}

TEST(avg_pool2d, channels_last_agrees_with_nchw) {
  const std::string line = "avg_pool2d mb=2 c=5 ih=9 iw=7 kh=3 kw=2 sh=2 sw=1 pt=1 pl=1 ceil_mode=1 dt=bf16:f32:bf16";
  const ot::direct_case nchw = ot::run_direct(parse_problem(line));
  const ot::direct_case nhwc = on_values(line + " layout=nhwc", nchw.in[0].to_vector());
  EXPECT_EQ(nhwc.in[0].to_vector(), nchw.in[0].to_vector());
  EXPECT_EQ(nhwc.ref[0].to_vector(), nchw.ref[0].to_vector());
  EXPECT_EQ(nhwc.out[0].to_vector(), nchw.out[0].to_vector());
  EXPECT_NE(nhwc.in[0].strides(), nchw.in[0].strides());
}

TEST(global_avg_pool, agrees_with_a_window_of_the_whole_plane) {
  const ot::direct_case global = ot::run_direct(parse_problem("global_avg_pool mb=2 c=3 ih=5 iw=6 dt=f32"));
  const ot::direct_case window =
      on_values("avg_pool2d mb=2 c=3 ih=5 iw=6 kh=5 kw=6 sh=1 sw=1 dt=f32", global.in[0].to_vector());
  EXPECT_EQ(global.out[0].shape(), (dims{2, 3, 1, 1}));
  EXPECT_EQ(global.ref[0].to_vector(), window.ref[0].to_vector());
  EXPECT_EQ(global.out[0].to_vector(), window.out[0].to_vector());
}

TEST(avg_pool2d, sim_within_bound_on_suites) {
  ot::expect_within_bound_on_suites("avg_pool2d");
  ot::expect_within_bound_on_suites("global_avg_pool");
}

TEST(avg_pool2d, suites_pass_under_sim) {
  for (const char* tag : {"smoke", "regression"}) ot::expect_suite_passes_under_sim(tag, {"avg_pool2d", "global_avg_pool"});
}

// The bound is not vacuous: the emulation uses a fair part of it. With f16 accumulation of
// same-signed terms the deterministic gamma is within a small factor of the error; on zero-mean
// f32 data the sum's error scales with |sum x|, the bound with sum|x|: about 1/(2 lambda sqrt n).
TEST(avg_pool2d, bound_is_tight) {
  for (const auto& [line, least] : std::vector<std::pair<std::string, double>>{
           {"global_avg_pool mb=4 c=64 ih=14 iw=14 dt=f16:f16:f16 fill=positive", 0.03},
           {"global_avg_pool mb=4 c=64 ih=14 iw=14 dt=f32:f32:f32", 0.01}}) {
    const double r = ot::checked_worst_ratio(ot::run_direct(parse_problem(line)));
    EXPECT_GT(r, least) << line;
    EXPECT_LE(r, 1.0) << line;
  }
}

const std::vector<std::string> variant_lines{
    "avg_pool2d mb=2 c=8 ih=15 iw=15 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 dt=f32",
    "avg_pool2d mb=1 c=4 ih=9 iw=9 kh=4 kw=4 sh=3 sw=3 pt=2 pb=1 pl=1 pr=2 ceil_mode=1 count_include_pad=1 dt=f16:f32:f16",
    "avg_pool2d mb=1 c=16 ih=8 iw=8 kh=8 kw=8 sh=1 sw=1 layout=nhwc dt=bf16:f32:bf16 fill=positive",
    "global_avg_pool mb=2 c=32 ih=14 iw=14 dt=f32 fill=wide",
    "global_avg_pool mb=1 c=8 ih=7 iw=7 dt=f16:f16:f16"};

ot::kernel_fn mean_variant(mean_kernel k) {
  return [k](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    ops::pool::mean_pool_simulate(p, in, out, k);
  };
}

TEST(avg_pool2d, legitimate_kernels_pass) {
  for (const mean_kernel k : {mean_kernel{sum_order::reversed, false}, mean_kernel{sum_order::pairwise, false},
                              mean_kernel{sum_order::forward, true}, mean_kernel{sum_order::pairwise, true}}) {
    ot::function_backend b("mean_variant", mean_variant(k));
    for (const auto& line : variant_lines) {
      const case_result r = ot::run_with(line, b);
      EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
    }
  }
}

// The sim kernel on a changed problem: a kernel that gets one thing of the contract wrong.
ot::kernel_fn sim_of_changed(std::function<void(problem&)> change) {
  return [change](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    problem q = p;
    change(q);
    ops::pool::mean_pool_simulate(q, in, out, {});
  };
}

TEST(avg_pool2d, f16_accumulation_fails) {
  ot::expect_fails("f16_acc", sim_of_changed([](problem& q) { q.dt.acc = dtype::f16; }),
                   {"global_avg_pool mb=1 c=16 ih=14 iw=14 dt=f32", "avg_pool2d mb=1 c=8 ih=16 iw=16 kh=4 kw=4 sh=4 sw=4 dt=f32"});
}

TEST(avg_pool2d, wrong_divisor_fails) {
  // Dividing by the padded count where the contract says the input's, and the other way round.
  ot::expect_fails("divisor_with_padding", sim_of_changed([](problem& q) { q.set("count_include_pad", true); }),
                   {"avg_pool2d mb=1 c=4 ih=7 iw=7 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 dt=f32"});
  ot::expect_fails("divisor_without_padding", sim_of_changed([](problem& q) { q.set("count_include_pad", false); }),
                   {"avg_pool2d mb=1 c=4 ih=7 iw=7 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 count_include_pad=1 dt=f32"});
}

TEST(avg_pool2d, dropped_tap_fails) {
  const ot::kernel_fn drop_last = [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const auto& s = dynamic_cast<const ops::pool::mean_pool_spec&>(p.spec());
    out[0].assign(ops::pool::pool_each(s.window_of(p), in[0].to_vector(), [](const ops::pool::window_values& v) {
      double sum = 0;
      for (std::size_t i = 0; i + 1 < v.inside.size(); ++i) sum += v.inside[i];
      return sum / double(v.inside.size());
    }));
  };
  ot::expect_fails("dropped_tap", drop_last,
                   {"avg_pool2d mb=1 c=4 ih=8 iw=8 kh=2 kw=2 sh=2 sw=2 dt=f32", "global_avg_pool mb=1 c=8 ih=7 iw=7 dt=bf16:f32:bf16"});
}

TEST(avg_pool2d, ignored_ceil_mode_fails) {
  ot::expect_fails("ceil_mode_ignored", ot::simulating_as_cropped([](problem& q) { q.set("ceil_mode", false); }),
                   {"avg_pool2d mb=1 c=3 ih=32 iw=32 kh=5 kw=5 sh=3 sw=3 pt=2 pb=2 pl=2 pr=2 ceil_mode=1 dt=f32",
                    "avg_pool2d mb=1 c=2 ih=10 iw=7 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 ceil_mode=1 dt=bf16:f32:bf16"});
}

TEST(avg_pool2d, channels_last_read_as_nchw_fails) {
  ot::expect_fails("nhwc_as_nchw",
                   ot::simulating_on([](const problem&, std::vector<tensor>& x) { x[0] = ot::nhwc_read_as_nchw(x[0]); }),
                   {"avg_pool2d mb=2 c=3 ih=8 iw=8 kh=2 kw=2 sh=2 sw=2 layout=nhwc dt=f32",
                    "global_avg_pool mb=2 c=3 ih=7 iw=7 layout=nhwc dt=bf16:f32:bf16"});
}

TEST(avg_pool2d, nan_skipping_mean_fails) {
  // A NaN-skipping mean (nanmean): the special fill's NaN must come out as NaN.
  ot::expect_fails("nan_skipped",
                   ot::simulating_on([](const problem&, std::vector<tensor>& x) { x[0] = ot::nans_as_zero(x[0]); }),
                   {"avg_pool2d mb=1 c=4 ih=7 iw=9 kh=3 kw=3 sh=1 sw=1 pt=1 pb=1 pl=1 pr=1 dt=f32 fill=special",
                    "global_avg_pool mb=2 c=3 ih=7 iw=7 dt=bf16:f32:bf16 fill=special"},
                   "NaN");
}

TEST(avg_pool2d, truncated_output_fails) {
  // Rounding toward zero where round-to-nearest was promised: caught by the bound or the bias test.
  ot::expect_fails("truncated_dst", sim_of_changed([](problem& q) { q.dt.dst_round = rounding::rz; }),
                   {"global_avg_pool mb=4 c=256 ih=7 iw=7 dt=bf16:f32:bf16 fill=positive"}, "");
}

}  // namespace
