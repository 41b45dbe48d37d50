// max_pool2d: hand-computed maxima (padding never a candidate, dilation, ceil_mode), NaN and
// -0 semantics, every suite exact under sim, integer contracts, and planted bugs failing with
// the element named: padding read as 0, NaN ignored, the window shifted by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/common_pool/pool_window.hpp"
#include "ops/common_reduce/reduction_numerics.hpp"
#include "ops/op_testing.hpp"

namespace {

using namespace opval;
namespace ot = opval::testing;
namespace pool = opval::ops::pool;

std::vector<double> reference_of(const std::string& line, const std::vector<double>& x) {
  ot::direct_case c = ot::filled_case(line);
  c.in[0].assign(x);
  return c.reference_values();
}

TEST(max_pool2d, hand_computed) {
  std::vector<double> x;  // 4x4: -1 .. -16, row by row
  for (int i = 1; i <= 16; ++i) x.push_back(-i);
  EXPECT_EQ(reference_of("max_pool2d ih=4 iw=4", x), (std::vector<double>{-1, -3, -9, -11}));
  // Padding is not a candidate: the corner window of an all-negative input is -1, not 0.
  EXPECT_EQ(reference_of("max_pool2d ih=4 iw=4 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1", x),
            (std::vector<double>{-1, -2, -5, -6}));
  // Dilation 2: taps (0,0) (0,2) (2,0) (2,2) of each window.
  EXPECT_EQ(reference_of("max_pool2d ih=4 iw=4 kh=2 kw=2 sh=1 sw=1 dh=2 dw=2", x),
            (std::vector<double>{-1, -2, -5, -6}));
  // ceil_mode: the last, partial windows.
  EXPECT_EQ(reference_of("max_pool2d ih=4 iw=4 kh=3 kw=3 sh=2 sw=2 ceil_mode=1", x),
            (std::vector<double>{-1, -3, -9, -11}));
}

TEST(max_pool2d, nan_wins_and_positive_zero_beats_negative_zero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> y = reference_of("max_pool2d ih=2 iw=4", {nan, 1, -0.0, -0.0, 5, 7, 0.0, -1});
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0);
  EXPECT_FALSE(std::signbit(y[1]));
}

TEST(max_pool2d, contracts_keep_the_input_type) {
  EXPECT_NE(ot::validation_error("max_pool2d dt=bf16:f32:f32").find("dst must be src's type"), std::string::npos);
  EXPECT_NE(ot::validation_error("max_pool2d dt=i8:i32:i8 fill=special").find("needs a float contract"),
            std::string::npos);
  EXPECT_EQ(ot::validation_error("max_pool2d dt=u8:i32:u8 fill=positive"), "");
}

TEST(max_pool2d, sim_is_exact_on_suites) { EXPECT_EQ(ot::expect_within_bound_on_suites("max_pool2d"), 0.0); }

TEST(max_pool2d, suites_pass_under_sim) {
  for (const char* tag : {"smoke", "regression"}) ot::expect_suite_passes_under_sim(tag, {"max_pool2d"});
}

/// A max-pooling kernel with `step` folding each window's taps (and `pad` as the value of a
/// tap in the padding, none when NaN), `shift` moving every window right by that many columns.
ot::kernel_fn max_kernel(std::function<double(double, double)> step, double pad, std::int64_t shift = 0) {
  return [=](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    pool::window g = dynamic_cast<const pool::pool_spec&>(p.spec()).window_of(p);
    g.w.pad_lo -= shift;
    const bool padded = !std::isnan(pad);
    out[0].assign(pool::pool_each(g, in[0].to_vector(), [&](const pool::window_values& v) {
      double m = -std::numeric_limits<double>::infinity();
      for (double t : v.inside) m = step(m, t);
      if (padded && v.padded > static_cast<std::int64_t>(v.inside.size())) m = step(m, pad);
      return m;
    }));
  };
}

double ieee_max(double a, double b) { return ops::reduce::max_of(a, b); }

const std::vector<std::string> padded_lines{
    "max_pool2d mb=2 c=8 ih=9 iw=9 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 dt=f32",
    "max_pool2d mb=1 c=16 ih=14 iw=14 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 layout=nhwc dt=bf16:f32:bf16",
    "max_pool2d mb=1 c=8 ih=8 iw=8 kh=3 kw=3 sh=1 sw=1 pt=1 pb=1 pl=1 pr=1 dt=i8:i32:i8"};

TEST(max_pool2d, padding_read_as_zero_fails) {
  ot::expect_fails("zero_padding", max_kernel(ieee_max, 0.0), padded_lines);
}

TEST(max_pool2d, ignored_nan_fails) {
  // fmax semantics: a NaN loses to any number.
  // At every seed, on a large and a small problem (the special fill puts NaN in every tensor).
  ot::expect_fails("fmax", max_kernel([](double a, double b) { return std::fmax(a, b); }, std::nan("")),
                   {"max_pool2d mb=2 c=16 ih=16 iw=16 kh=3 kw=3 sh=1 sw=1 dt=f32 fill=special",
                    "max_pool2d mb=1 c=2 ih=4 iw=4 dt=bf16:f32:bf16 fill=special"},
                   "NaN");
}

TEST(max_pool2d, ignored_ceil_mode_fails) {
  // The floor-mode grid only: the last partial windows of ceil_mode=1 are never computed.
  ot::expect_fails("ceil_mode_ignored", ot::simulating_as_cropped([](problem& q) { q.set("ceil_mode", false); }),
                   {"max_pool2d mb=1 c=2 ih=10 iw=7 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 ceil_mode=1 dt=f32",
                    "max_pool2d mb=2 c=3 ih=9 iw=9 kh=4 kw=4 sh=3 sw=3 pt=2 pb=1 pl=1 pr=2 ceil_mode=1 dt=bf16:f32:bf16"});
}

TEST(max_pool2d, ignored_dilation_fails) {
  ot::expect_fails("dilation_ignored", ot::simulating_as_cropped([](problem& q) {
                     q.set("dh", std::int64_t{1});
                     q.set("dw", std::int64_t{1});
                   }),
                   {"max_pool2d mb=1 c=3 ih=12 iw=12 kh=3 kw=3 sh=1 sw=1 pt=2 pb=2 pl=2 pr=2 dh=2 dw=2 dt=f32"});
}

TEST(max_pool2d, channels_last_read_as_nchw_fails) {
  ot::expect_fails("nhwc_as_nchw",
                   ot::simulating_on([](const problem&, std::vector<tensor>& x) { x[0] = ot::nhwc_read_as_nchw(x[0]); }),
                   {"max_pool2d mb=2 c=3 ih=8 iw=8 kh=2 kw=2 sh=2 sw=2 layout=nhwc dt=f32",
                    "max_pool2d mb=1 c=4 ih=7 iw=9 kh=3 kw=3 sh=1 sw=1 pt=1 pb=1 pl=1 pr=1 layout=nhwc dt=i8:i32:i8"});
}

TEST(max_pool2d, shifted_window_fails) {
  ot::expect_fails("shifted_window", max_kernel(ieee_max, std::nan(""), 1),
                   {"max_pool2d mb=1 c=8 ih=8 iw=9 kh=2 kw=2 sh=2 sw=2 dt=f32", "max_pool2d mb=1 c=4 ih=6 iw=6 dt=u8:i32:u8"});
}

// The same maximum found another way (a running std::max with an explicit NaN check, in
// reverse tap order; its max(-0, +0) may be -0, which is reported but does not fail) is exact too.
TEST(max_pool2d, reversed_comparisons_pass) {
  ot::function_backend b("reversed", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const pool::window g = dynamic_cast<const pool::pool_spec&>(p.spec()).window_of(p);
    out[0].assign(pool::pool_each(g, in[0].to_vector(), [](const pool::window_values& v) {
      double m = v.inside.back();
      for (auto t = v.inside.rbegin(); t != v.inside.rend(); ++t) m = std::isnan(m) || std::isnan(*t) ? m + *t : std::max(m, *t);
      return m;
    }));
  });
  for (const auto& line : padded_lines) {
    const case_result r = ot::run_with(line, b);
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason;
  }
}

}  // namespace
