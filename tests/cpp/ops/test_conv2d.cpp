// conv2d: hand-computed cases, equality with im2col + the matmul reference GEMM, layout
// equivalence, sim within bound, suites end-to-end, planted bugs.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "ops/conv2d/conv2d.hpp"
#include "ops/gemm_testing.hpp"
#include "ops/op_testing.hpp"
#include "ops/common_gemm/reference_gemm.hpp"
#include "opval/error.hpp"

namespace opval::test {
namespace {

using namespace opval::testing;

TEST(conv2d, hand_computed_padded_strided) {
  // 3x3 input 1..9, 2x2 kernel of ones, padding 1 on top/left only, stride 2: the outputs
  // sum the taps inside the image: (0,0) -> 1; (0,1) -> 2+3; (1,0) -> 4+7; (1,1) -> 5+6+8+9.
  direct_case c = filled_case("conv2d ic=1 oc=1 ih=3 iw=3 kh=2 kw=2 sh=2 sw=2 pt=1 pl=1 bias=1 dt=f64:f64:f64");
  c.in[0].assign(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  c.in[1].assign(std::vector<double>{1, 1, 1, 1});
  c.in[2].assign(std::vector<double>{0.5});
  EXPECT_EQ(c.ref[0].shape(), (dims{1, 1, 2, 2}));
  EXPECT_EQ(c.reference_values(), (std::vector<double>{1.5, 5.5, 11.5, 28.5}));
  c.run_simulate();
  EXPECT_EQ(c.out[0].to_vector(), (std::vector<double>{1.5, 5.5, 11.5, 28.5}));
}

TEST(conv2d, hand_computed_dilation_and_depthwise) {
  // Depthwise (g=2), 1x2 kernel with dilation 2 along w: out = w0*x[ix] + w1*x[ix+2].
  direct_case c = filled_case("conv2d ic=2 oc=2 g=2 ih=1 iw=4 kh=1 kw=2 dw=2 dt=f64:f64:f64");
  c.in[0].assign(std::vector<double>{1, 2, 3, 4, 10, 20, 30, 40});
  c.in[1].assign(std::vector<double>{1, -1, 2, 1});
  EXPECT_EQ(c.reference_values(), (std::vector<double>{1 - 3, 2 - 4, 20 + 30, 40 + 40}));
}

TEST(conv2d, integer_padding_uses_the_zero_point) {
  // Padded taps hold the zero point: they add nothing to sum (x - zp) * w.
  direct_case c = filled_case("conv2d ic=1 oc=1 ih=1 iw=1 kh=1 kw=3 pl=1 pr=1 zp_a=100 dt=u8xi8:i32:i32");
  c.in[0].assign(std::vector<double>{103});
  c.in[1].assign(std::vector<double>{5, 7, 9});
  EXPECT_EQ(c.reference_values(), (std::vector<double>{21}));
  c.run_simulate();
  EXPECT_EQ(c.out[0].to_vector(), (std::vector<double>{21}));
}

// conv2d's reference equals im2col followed by the matmul reference GEMM, group by group.
void expect_equals_im2col_gemm(const std::string& line) {
  direct_case c = filled_case(line);
  const auto got = c.reference_values();
  const auto s = ops::conv2d::read_shape(c.p);
  const auto x = c.in[0].to_vector(), w = c.in[1].to_vector();
  const std::int64_t ohw = s.oh * s.ow;
  for (std::int64_t n = 0; n < s.mb; ++n)
    for (std::int64_t g = 0; g < s.g; ++g) {
      const auto col = ops::conv2d::im2col(s, x, n, g, 0.0);
      std::vector<double> y(s.ocg() * ohw);
      ops::matmul::reference_gemm(s.ocg(), ohw, s.k(), w.data() + g * s.ocg() * s.k(), col.data(), y.data());
      for (std::int64_t i = 0; i < s.ocg() * ohw; ++i)
        ASSERT_EQ(got[(n * s.oc + g * s.ocg()) * ohw + i], y[i]) << line;
    }
  // And a direct 7-loop convolution for the first image.
  for (std::int64_t o = 0; o < s.oc; ++o)
    for (std::int64_t oy = 0; oy < s.oh; ++oy)
      for (std::int64_t ox = 0; ox < s.ow; ++ox) {
        double acc = 0;
        const std::int64_t g = o / s.ocg();
        for (std::int64_t ci = 0; ci < s.icg(); ++ci)
          for (std::int64_t ky = 0; ky < s.kh; ++ky)
            for (std::int64_t kx = 0; kx < s.kw; ++kx) {
              const std::int64_t iy = oy * s.sh - s.pt + ky * s.dh, ix = ox * s.sw - s.pl + kx * s.dw;
              if (iy < 0 || iy >= s.ih || ix < 0 || ix >= s.iw) continue;
              acc += x[((g * s.icg() + ci) * s.ih + iy) * s.iw + ix] * w[((o * s.icg() + ci) * s.kh + ky) * s.kw + kx];
            }
        EXPECT_NEAR(got[(o * s.oh + oy) * s.ow + ox], acc, 1e-12 * (1 + std::abs(acc))) << line;
      }
}

TEST(conv2d, equals_im2col_plus_matmul_reference) {
  expect_equals_im2col_gemm("conv2d mb=2 ic=6 oc=4 ih=9 iw=7 kh=3 kw=2 sh=2 sw=1 pt=1 pb=2 pr=1 dh=2 g=2 dt=f64:f64:f64");
  expect_equals_im2col_gemm("conv2d ic=8 oc=8 ih=6 iw=6 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 g=8 layout=nhwc dt=f64:f64:f64");
  expect_equals_im2col_gemm("conv2d ic=3 oc=8 ih=23 iw=23 kh=7 kw=7 sh=2 sw=2 pt=3 pb=3 pl=3 pr=3 dt=f64:f64:f64");
}

// im2col (a strided copy between the padding's ranges) and im2row (tap by tap) against a direct
// reading of src, over random geometries: strides, dilations, pads wider than the kernel reach.
TEST(conv2d, im2col_and_im2row_read_every_tap_as_the_definition_says) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    const std::string line = fmt::format(
        "conv2d mb=2 ic=4 oc=2 g=2 ih={} iw={} kh={} kw={} sh={} sw={} dh={} dw={} pt={} pb={} pl={} pr={}", pick(1, 9),
        pick(1, 9), pick(1, 4), pick(1, 4), pick(1, 3), pick(1, 3), pick(1, 3), pick(1, 3), pick(0, 4), pick(0, 4),
        pick(0, 5), pick(0, 5));
    ops::conv2d::conv_shape s;
    try {
      s = ops::conv2d::read_shape(parse_problem(line));
    } catch (const error&) {
      continue;  // the dilated kernel is larger than the padded input
    }
    std::vector<double> src(std::size_t(s.mb * s.ic * s.ih * s.iw));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = double(i + 1);
    const std::int64_t positions = s.oh * s.ow;
    for (std::int64_t n = 0; n < s.mb; ++n)
      for (std::int64_t gi = 0; gi < s.g; ++gi) {
        const auto col = ops::conv2d::im2col(s, src, n, gi, -1.0), row = ops::conv2d::im2row(s, src, n, gi, -1.0);
        for (std::int64_t c = 0; c < s.icg(); ++c)
          for (std::int64_t ky = 0; ky < s.kh; ++ky)
            for (std::int64_t kx = 0; kx < s.kw; ++kx)
              for (std::int64_t oy = 0; oy < s.oh; ++oy)
                for (std::int64_t ox = 0; ox < s.ow; ++ox) {
                  const std::int64_t iy = oy * s.sh - s.pt + ky * s.dh, ix = ox * s.sw - s.pl + kx * s.dw;
                  const bool inside = iy >= 0 && iy < s.ih && ix >= 0 && ix < s.iw;
                  const double want =
                      inside ? src[std::size_t(((n * s.ic + gi * s.icg() + c) * s.ih + iy) * s.iw + ix)] : -1.0;
                  const std::int64_t t = (c * s.kh + ky) * s.kw + kx, q = oy * s.ow + ox;
                  ASSERT_EQ(col[std::size_t(t * positions + q)], want) << line << " tap " << t << " at " << q;
                  ASSERT_EQ(row[std::size_t(q * s.k() + t)], want) << line << " tap " << t << " at " << q;
                }
      }
  }
}

TEST(conv2d, nhwc_and_nchw_agree_on_the_same_logical_values) {
  direct_case a = filled_case("conv2d ic=5 oc=6 ih=7 iw=8 kh=3 kw=3 pt=1 pl=2 bias=1 residual=1 dt=f64:f64:f64");
  direct_case b = filled_case("conv2d ic=5 oc=6 ih=7 iw=8 kh=3 kw=3 pt=1 pl=2 bias=1 residual=1 layout=nhwc dt=f64:f64:f64");
  EXPECT_EQ(b.in[0].strides(), (dims{7 * 8 * 5, 1, 8 * 5, 5}));
  for (std::size_t i = 0; i < a.in.size(); ++i) b.in[i].assign(a.in[i].to_vector());
  EXPECT_EQ(a.reference_values(), b.reference_values());
}

TEST(conv2d, sim_error_within_bound_for_random_cases) {
  const char* lines[] = {
      "conv2d ic=8 oc=16 ih=15 iw=13 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 bias=1 act=gelu dt=f32:f32:f32",
      "conv2d ic=16 oc=16 ih=10 iw=10 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 g=16 layout=nhwc residual=1 dt=bf16:f32:bf16",
      "conv2d ic=4 oc=6 ih=12 iw=11 kh=3 kw=3 dh=2 dw=2 act=silu dt=f16:f16:f16",
      "conv2d ic=32 oc=24 ih=7 iw=7 alpha=0.3 bias=1 dt=f32@tf32:f32:f32",
      "conv2d ic=8 oc=12 ih=9 iw=9 kh=3 kw=3 g=4 scale_a=0.5 scale_b=0.25 dt=f8_e5m2:f32:f32",
      "conv2d ic=8 oc=12 ih=9 iw=9 kh=3 kw=3 zp_a=128 scale_a=0.01 scale_b=0.02 scale_b_mode=per_channel bias=1 dt=u8xi8:i32:f32",
  };
  for (const char* l : lines) {
    direct_case c = filled_case(l);
    EXPECT_LE(c.sim_error_over_bound(), 1.0) << l;
  }
}

TEST(conv2d, bad_geometry_throws) {
  const op_spec& s = find_op("conv2d");
  EXPECT_THROW(s.validate(parse_problem("conv2d ic=6 oc=4 g=4 ih=3 iw=3")), opval::error);
  EXPECT_THROW(s.validate(parse_problem("conv2d ic=1 oc=1 ih=2 iw=2 kh=3 kw=3")), opval::error);
  EXPECT_THROW(s.validate(parse_problem("conv2d ic=1 oc=1 ih=2 iw=2 dt=f16:f16:f32")), opval::error);
}

TEST(conv2d, suites_parse_and_validate) {
  const op_spec& s = find_op("conv2d");
  for (const char* tag : {"smoke", "regression"})
    for (const auto& l : s.suite(tag)) {
      problem p = parse_problem(l);
      EXPECT_NO_THROW(s.validate(p)) << l;
      EXPECT_EQ(parse_problem(p.to_string()), p) << l;
    }
}

// tests/problems/, found from this file's path (tests/cpp/ops/).
std::string problems_dir() {
  return (std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "problems").string() + "/";
}

TEST(conv2d, resnet50_shape_set_parses) {
  const auto probs = read_problem_file(problems_dir() + "resnet50_conv.txt");
  EXPECT_EQ(probs.size(), 23u);
  for (const auto& lp : probs) EXPECT_NO_THROW(lp.prob.spec().validate(lp.prob)) << lp.source;
  for (const char* f : {"bert_base_matmul.txt", "llama_matmul.txt"})
    for (const auto& lp : read_problem_file(problems_dir() + f))
      EXPECT_NO_THROW(lp.prob.spec().validate(lp.prob)) << lp.source;
}

TEST(conv2d, smoke_suite_passes_under_sim) { expect_suite_passes_under_sim("smoke", {"conv2d"}); }
TEST(conv2d, regression_suite_passes_under_sim) { expect_suite_passes_under_sim("regression", {"conv2d"}); }

TEST(conv2d_planted, dropped_last_tap_fails) {
  // The kernel skips the last tap (last kw) of every filter.
  function_backend b("drop_tap", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    std::vector<tensor> copy(in.begin(), in.end());
    copy[1] = in[1].contiguous();
    const std::int64_t k = p.get_int("kw");
    for (std::int64_t i = k - 1; i < copy[1].numel(); i += k) copy[1].set_at(i, 0.0);
    p.spec().simulate(p, copy, out);
  });
  const auto r = run_with("conv2d ic=8 oc=16 ih=9 iw=9 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 dt=f32:f32:f32", b);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
}

TEST(conv2d_planted, truncated_bf16_output_fails_and_zero_output_is_mistrusted) {
  function_backend rz("rz", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    problem q = p;
    q.dt.dst_round = rounding::rz;
    p.spec().simulate(q, in, out);
  });
  const auto r = run_with("conv2d ic=16 oc=32 ih=12 iw=12 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 bias=1 dt=bf16:f32:bf16", rz);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
  function_backend zero("zero", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    out[0].assign(std::vector<double>(out[0].numel(), 0.0));
  });
  EXPECT_EQ(run_with("conv2d ic=4 oc=4 ih=6 iw=6 kh=3 kw=3 dt=f32:f32:f32", zero).v.st, state::mistrusted);
}

// --- one planted bug per feature of the generated suites' table, caught at seeds 1..8 --------

const std::string base = "conv2d ic=8 oc=16 ih=15 iw=13 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1";

TEST(conv2d_planted, epilogue_bugs_fail_at_every_seed) {
  expect_epilogue_bugs_fail_at_every_seed(base, base + " dt=u8xi8:i32:f32 scale_a=0.01 scale_b=0.02 zp_a=128");
}

TEST(conv2d_planted, ignored_stride_fails_at_every_seed) {
  // The output grid is right, its windows step by 1: output (y, x) reads the window of (y, x) at stride 1.
  expect_fails_at_every_seed("stride_ignored", simulating_as_cropped([](problem& q) {
                               q.set("sh", std::int64_t{1});
                               q.set("sw", std::int64_t{1});
                             }),
                             {base + " dt=f32:f32:f32", base + " layout=nhwc dt=bf16:f32:bf16"});
}

TEST(conv2d_planted, ignored_dilation_fails_at_every_seed) {
  // Taps read next to each other instead of dh, dw apart.
  expect_fails_at_every_seed("dilation_ignored", simulating_as_cropped([](problem& q) {
                               q.set("dh", std::int64_t{1});
                               q.set("dw", std::int64_t{1});
                             }),
                             {"conv2d ic=4 oc=6 ih=12 iw=11 kh=3 kw=3 sh=1 sw=1 dh=2 dw=2 pt=2 pb=2 pl=2 pr=2 dt=f32:f32:f32",
                              "conv2d ic=4 oc=6 ih=12 iw=11 kh=3 kw=3 sh=1 sw=1 dh=2 dw=2 pt=2 pb=2 pl=2 pr=2 dt=bf16:f32:bf16"});
}

TEST(conv2d_planted, every_group_reading_group_0_fails_at_every_seed) {
  expect_fails_at_every_seed("group_0_channels", simulating_on([](const problem& p, std::vector<tensor>& x) {
                               const std::int64_t icg = p.get_int("ic") / p.get_int("g");
                               x[0] = remapped(x[0], [icg](const tensor& src, const dims& i) {
                                 return src.get(dims{i[0], i[1] % icg, i[2], i[3]});
                               });
                             }),
                             {"conv2d ic=8 oc=12 ih=9 iw=9 kh=3 kw=3 sh=1 sw=1 g=4 pt=0 pb=0 pl=0 pr=0 dt=f32:f32:f32",
                              "conv2d ic=16 oc=16 ih=10 iw=10 kh=3 kw=3 sh=1 sw=1 g=16 pt=1 pb=1 pl=1 pr=1 dt=bf16:f32:bf16"});
}

TEST(conv2d_planted, channels_last_read_as_nchw_fails_at_every_seed) {
  // layout=nhwc: the kernel reads the NHWC memory of src with NCHW offsets.
  expect_fails_at_every_seed("nhwc_as_nchw",
                             simulating_on([](const problem&, std::vector<tensor>& x) { x[0] = nhwc_read_as_nchw(x[0]); }),
                             {base + " layout=nhwc dt=f32:f32:f32", base + " layout=nhwc dt=bf16:f32:bf16"});
}

}  // namespace
}  // namespace opval::test
