// Sampled verification (--verify sampled; docs/NUMERICS.md "Sampled verification"): correct
// kernels pass at every size and seed tried, planted bugs fail and are localised, and the
// verdict records how it was verified.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "backend_testing.hpp"
#include "ops/common_gemm/gemm_sample.hpp"
#include "ops/op_testing.hpp"
#include "opval/runner.hpp"

namespace opval {
namespace {

using testing::every_seed;
using testing::function_backend;
using testing::kernel_fn;

case_result run_verified(const std::string& line, backend& b, std::uint64_t seed, const std::string& verify = "sampled") {
  run_options o;
  o.seed = seed;
  o.verify = verify;
  return run_case(parse_problem(line), b, o);
}

// A correct kernel more accurate than its contract: the fp64 product rounded once to dst.
void exact_then_rounded(const problem& p, std::span<const tensor> in, std::span<tensor> out) {
  std::vector<tensor> ref = {tensor(dtype::f64, out[0].shape())};
  p.spec().reference(p, in, ref);
  out[0].assign(ref[0].to_vector(), p.dt.dst_round);
}

// The correct kernel with `damage(linear index, row, column, value)` applied to each output element.
kernel_fn damaged(std::function<double(std::int64_t i, std::int64_t j, double v)> damage) {
  return [damage](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    exact_then_rounded(p, in, out);
    const std::int64_t n = p.get_int("n"), m = p.get_int("m");
    std::vector<double> v = out[0].to_vector();
    for (std::int64_t at = 0; at < std::int64_t(v.size()); ++at) v[at] = damage(at / n % m, at % n, v[at]);
    out[0].assign(v);
  };
}

bool in_tile(std::int64_t i, std::int64_t j, std::int64_t r0, std::int64_t c0, std::int64_t size) {
  return i >= r0 && i < r0 + size && j >= c0 && j < c0 + size;
}

const std::vector<std::string> correct_lines = {
    "matmul m=256 n=256 k=256 dt=f32:f32:f32",
    "matmul m=250 n=301 k=97 dt=f32:f32:f32",
    "matmul m=200 n=130 k=512 dt=bf16:f32:bf16",
    "matmul m=192 n=160 k=64 batch_a=3 batch_b=1 dt=f32:f32:f32",
    "matmul m=160 n=192 k=80 ta=1 ldb=200 alpha=0.5 beta=0.25 bias=1 residual=1 dt=f32:f32:f32",
    "matmul m=144 n=176 k=48 scale_b_mode=per_channel scale_a=0.5 dt=f16:f32:f16",
};

TEST(SampledVerification, SampleHoldsOneElementInEveryAlignedTileAndTheEdges) {
  for (const std::int64_t extent : {65, 250, 256, 1000, 4096}) {
    const std::vector<std::int64_t> kept = ops::common_gemm::sampled_indices(extent, 16, 7, 0);
    for (std::int64_t band = 0; band * 16 < extent; ++band)
      EXPECT_TRUE(std::any_of(kept.begin(), kept.end(), [&](std::int64_t i) { return i / 16 == band; }))
          << extent << " band " << band;
    EXPECT_EQ(kept.front(), 0);
    EXPECT_EQ(kept.back(), extent - 1);
    for (const std::int64_t tiling : {8, 16, 32, 64, 128})
      if (extent % tiling) EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), extent - extent % tiling)) << extent;
    EXPECT_LE(double(kept.size()), double(extent) / 16 + 7) << extent;
  }
}

// Correct kernels (the exact product rounded once, and the contract-exact sim) pass every line
// at every seed under sampled verification, with the checksums applied and passing where the
// op has them.
void expect_correct_kernels_pass(const std::vector<std::string>& lines, bool checksums) {
  function_backend exact("exact", exact_then_rounded);
  auto sim = make_sim_backend();
  for (backend* b : {static_cast<backend*>(&exact), sim.get()})
    for (const std::string& line : lines)
      for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
        const case_result r = run_verified(line, *b, seed);
        EXPECT_EQ(r.v.st, state::passed) << b->name() << " seed " << seed << ": " << line << ": " << r.v.reason;
        EXPECT_EQ(r.verified.method, "sampled") << line << ": " << r.verified.why;
        ASSERT_EQ(r.v.outputs.size(), 1u);
        ASSERT_EQ(r.v.outputs[0].checks.size(), checksums ? 1u : 0u) << line;
        if (checksums)
          EXPECT_EQ(r.v.outputs[0].checks[0].st, state::passed) << line << ": " << r.v.outputs[0].checks[0].reason;
      }
}

TEST(SampledVerification, CorrectKernelsPassAtEverySeed) { expect_correct_kernels_pass(correct_lines, true); }

TEST(SampledVerification, OpenblasPassesAtLargerSizes) {
  OPVAL_BACKEND_OR_SKIP(b, "openblas");
  for (const char* line : {"matmul m=1024 n=1024 k=1024 dt=f32:f32:f32", "matmul m=777 n=1500 k=2048 dt=f32:f32:f32"})
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const case_result r = run_verified(line, *b, seed);
      EXPECT_EQ(r.v.st, state::passed) << line << " seed " << seed << ": " << r.v.reason;
      EXPECT_EQ(r.verified.method, "sampled");
    }
}

// A tile of 16x16 wrong by about the outputs' size, aligned or not: the checksums localise it
// to its rows and columns; the sample's worst element lies in it when it is aligned.
TEST(SampledVerification, AWrongTileIsCaughtAndLocalised) {
  const std::string line = "matmul m=512 n=512 k=256 dt=f32:f32:f32";
  for (const auto& [r0, c0] : std::vector<std::pair<std::int64_t, std::int64_t>>{{96, 320}, {8, 40}, {496, 0}}) {
    function_backend b("tile", damaged([&](std::int64_t i, std::int64_t j, double v) {
                         return in_tile(i, j, r0, c0, 16) ? v + 8.0 : v;
                       }));
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
      const case_result r = run_verified(line, b, seed);
      ASSERT_EQ(r.v.st, state::failed) << r0 << "," << c0 << " seed " << seed;
      const output_verdict& ov = r.v.outputs[0];
      ASSERT_EQ(ov.checks.size(), 1u);
      EXPECT_EQ(ov.checks[0].st, state::failed) << ov.checks[0].reason;
      EXPECT_NE(ov.checks[0].reason.find(fmt::format("rows {}..{}", r0, r0 + 15)), std::string::npos) << ov.checks[0].reason;
      EXPECT_NE(ov.checks[0].reason.find(fmt::format("columns {}..{}", c0, c0 + 15)), std::string::npos) << ov.checks[0].reason;
      // An aligned tile holds a sampled element; an unaligned one may fall between the samples.
      ASSERT_FALSE(ov.m.worst.empty());
      if (r0 % 16 == 0 && c0 % 16 == 0)
        EXPECT_TRUE(in_tile(ov.m.worst[0].index[0], ov.m.worst[0].index[1], r0, c0, 16)) << ov.reason;
    }
  }
}

// Issue 19's demonstration: the openblas kernel wrapped so that it corrupts one 16x16 tile of a
// 4096^2 output. Grossly wrong (aligned or not), the checksums localise it to its rows and
// columns; slightly wrong (2^-10 relative, about what the checksums' thresholds allow) and
// aligned, the sample's element in that tile catches it, its worst element in the tile.
TEST(SampledVerification, OneWrongTileOfA4096SquareOpenblasOutputIsCaughtAndLocalised) {
  OPVAL_BACKEND_OR_SKIP(blas, "openblas");
  const std::string line = "matmul m=4096 n=4096 k=256 dt=f32:f32:f32";
  auto wrapped = [&](std::int64_t r0, std::int64_t c0, std::function<float(float)> damage) {
    return function_backend("openblas+tile", [&, r0, c0, damage](const problem& p, std::span<const tensor> in,
                                                                 std::span<tensor> out) {
      blas->prepare(p, in, out);
      blas->execute(p, in, out);
      blas->synchronize(out);
      float* y = out[0].data_as<float>();
      for (std::int64_t i = r0; i < r0 + 16; ++i)
        for (std::int64_t j = c0; j < c0 + 16; ++j) y[i * 4096 + j] = damage(y[i * 4096 + j]);
    });
  };
  for (const auto& [r0, c0] : std::vector<std::pair<std::int64_t, std::int64_t>>{{2048, 1040}, {1001, 3003}}) {
    function_backend gross = wrapped(r0, c0, [](float v) { return v + 4.0f; });
    const case_result r = run_verified(line, gross, 1);
    ASSERT_EQ(r.v.st, state::failed) << r0;
    const std::string& why = r.v.outputs[0].checks.at(0).reason;
    EXPECT_NE(why.find(fmt::format("rows {}..{} (16 in all)", r0, r0 + 15)), std::string::npos) << why;
    EXPECT_NE(why.find(fmt::format("columns {}..{} (16 in all)", c0, c0 + 15)), std::string::npos) << why;
  }
  function_backend slight = wrapped(1536, 512, [](float v) { return v * (1.0f + 0x1p-10f); });
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const case_result r = run_verified(line, slight, seed);
    ASSERT_EQ(r.v.st, state::failed) << seed;
    const dims& at = r.v.outputs[0].m.worst.at(0).index;
    EXPECT_TRUE(in_tile(at[0], at[1], 1536, 512, 16)) << at[0] << "," << at[1];
  }
}

// Errors too small for the checksums but beyond the element bound: the sample holds one
// element of every aligned 16x16 tile, so a tile wrong throughout is caught at every seed.
TEST(SampledVerification, ASlightlyWrongAlignedTileIsCaughtByTheSample) {
  function_backend b("slight", damaged([](std::int64_t i, std::int64_t j, double v) {
                       return in_tile(i, j, 208, 48, 16) ? v * (1 + 0x1p-12) + 1e-3 : v;
                     }));
  for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
    const case_result r = run_verified("matmul m=512 n=384 k=128 dt=f32:f32:f32", b, seed);
    ASSERT_EQ(r.v.st, state::failed) << seed;
    EXPECT_NE(r.v.reason.find("beyond the bound"), std::string::npos) << r.v.reason;
    EXPECT_TRUE(in_tile(r.v.outputs[0].m.worst[0].index[0], r.v.outputs[0].m.worst[0].index[1], 208, 48, 16));
  }
}

TEST(SampledVerification, PlantedBugsFail) {
  const std::string line = "matmul m=300 n=280 k=200 beta=1 bias=1 dt=f32:f32:f32";
  const std::vector<std::pair<std::string, kernel_fn>> bugs = {
      {"the last partial rows", damaged([](std::int64_t i, std::int64_t, double v) { return i >= 288 ? -v : v; })},
      {"one NaN element", damaged([](std::int64_t i, std::int64_t j, double v) { return i == 150 && j == 77 ? NAN : v; })},
      {"one element far off", damaged([](std::int64_t i, std::int64_t j, double v) { return i == 151 && j == 78 ? v + 1e3 : v; })},
      {"C ignored", testing::simulating_as([](problem& p) { p.set("beta", 0.0); })},
      {"accumulated in bf16", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
         problem q = p;
         q.dt = parse_contract("bf16:bf16:f32");
         std::vector<tensor> rounded;
         for (const tensor& t : in) rounded.push_back(t.to(dtype::bf16).to(t.type()));
         exact_then_rounded(q, rounded, out);
       }},
  };
  for (const auto& [name, k] : bugs) {
    function_backend b(name, k);
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed)
      EXPECT_EQ(run_verified(line, b, seed).v.st, state::failed) << name << " seed " << seed;
  }
}

TEST(SampledVerification, NeverWrittenElementsAreFoundInTheOneRun) {
  function_backend b("unwritten", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    std::vector<tensor> ref = {tensor(dtype::f64, out[0].shape())};
    p.spec().reference(p, in, ref);
    for (std::int64_t at = 0; at < out[0].numel(); ++at)
      if (at % 300 < 290) out[0].set_at(at, ref[0].at(at));  // the last 10 columns never written
  });
  const case_result r = run_verified("matmul m=300 n=300 k=64 dt=f32:f32:f32", b, 1);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_NE(r.v.reason.find("never written"), std::string::npos) << r.v.reason;
  EXPECT_NE(r.not_applicable.find("runs the kernel once"), std::string::npos);
}

// The checksums' sums are blocked by rows, not by threads: their texts (thresholds, the worst
// ratio) are the same for any thread count, as every other part of a record.
TEST(SampledVerification, ChecksumTextsDoNotDependOnTheThreadCount) {
  function_backend b("tile", damaged([](std::int64_t i, std::int64_t j, double v) {
                       return in_tile(i, j, 64, 128, 16) ? v + 3.0 : v;
                     }));
  std::vector<std::string> texts;
  for (const int threads : {1, 2, 3}) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    const case_result r = run_verified("matmul m=700 n=650 k=300 dt=f32:f32:f32", b, 4);
    omp_set_num_threads(before);
    ASSERT_EQ(r.v.st, state::failed);
    texts.push_back(r.verified.checksums + " | " + r.v.outputs[0].checks[0].reason);
  }
  EXPECT_EQ(texts[0], texts[1]);
  EXPECT_EQ(texts[0], texts[2]);
}

// --- conv2d: a sample of whole output channels, checksums of the GEMM form -------------------

// The correct conv2d kernel with `damage(image, channel, output position, value)` applied to
// each output element.
kernel_fn damaged_conv(std::function<double(std::int64_t n, std::int64_t c, std::int64_t q, double v)> damage) {
  return [damage](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    exact_then_rounded(p, in, out);
    const dims& d = out[0].shape();  // logical [mb, oc, oh, ow]
    const std::int64_t positions = d[2] * d[3];
    std::vector<double> v = out[0].to_vector();
    for (std::int64_t at = 0; at < std::int64_t(v.size()); ++at)
      v[at] = damage(at / positions / d[1], at / positions % d[1], at % positions, v[at]);
    out[0].assign(v);
  };
}

const std::vector<std::string> correct_conv_lines = {
    "conv2d mb=2 ic=16 oc=200 ih=12 iw=11 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 bias=1 dt=f32:f32:f32",
    "conv2d mb=1 ic=24 oc=160 ih=9 iw=9 kh=3 kw=3 sh=2 sw=2 g=2 residual=1 layout=nhwc dt=f32:f32:f32",
    "conv2d mb=3 ic=32 oc=130 ih=7 iw=7 kh=1 kw=1 bias=1 dt=bf16:f32:bf16",
    "conv2d mb=1 ic=16 oc=96 ih=10 iw=10 kh=3 kw=3 dh=2 dw=2 scale_b_mode=per_channel scale_a=0.5 dt=f16:f32:f16",
    "conv2d mb=2 ic=16 oc=144 ih=8 iw=8 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 dt=u8xi8:i32:f32 scale_a=0.01 scale_b=0.02 "
    "zp_a=128",
    "conv2d mb=1 ic=12 oc=216 ih=6 iw=7 kh=3 kw=3 g=3 bias=1 scale_b_mode=per_channel dt=f32:f32:f32",
};

TEST(SampledVerification, ConvCorrectKernelsPassAtEverySeed) { expect_correct_kernels_pass(correct_conv_lines, true); }

// 16 channels of image 1 wrong over a block of output positions: the checksums name the image,
// the positions and the channels; the sample holds every position of a channel in each band.
TEST(SampledVerification, ConvWrongChannelBlockIsCaughtAndLocalised) {
  const std::string line = "conv2d mb=2 ic=16 oc=256 ih=16 iw=16 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 dt=f32:f32:f32";
  function_backend b("block", damaged_conv([](std::int64_t n, std::int64_t c, std::int64_t q, double v) {
                       return n == 1 && c >= 96 && c < 112 && q >= 32 && q < 48 ? v + 8.0 : v;
                     }));
  for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
    const case_result r = run_verified(line, b, seed);
    ASSERT_EQ(r.v.st, state::failed) << seed;
    const output_verdict& ov = r.v.outputs[0];
    ASSERT_EQ(ov.checks.size(), 1u);
    const std::string& why = ov.checks[0].reason;
    EXPECT_NE(why.find("in image 1, output positions"), std::string::npos) << why;
    EXPECT_NE(why.find("32..47"), std::string::npos) << why;
    EXPECT_NE(why.find("channels 96..111"), std::string::npos) << why;
    ASSERT_FALSE(ov.m.worst.empty());
    const dims& at = ov.m.worst[0].index;  // [n, c, oy, ox]
    EXPECT_EQ(at[0], 1);
    EXPECT_TRUE(at[1] >= 96 && at[1] < 112 && at[2] * 16 + at[3] >= 32 && at[2] * 16 + at[3] < 48) << ov.reason;
  }
}

// Below the checksums' threshold but beyond the element bound, one band of 16 channels wrong at
// every position: a sampled channel lies in the band, so the sample catches it at every seed.
TEST(SampledVerification, ConvSlightlyWrongChannelBandIsCaughtByTheSample) {
  function_backend b("slight", damaged_conv([](std::int64_t, std::int64_t c, std::int64_t, double v) {
                       return c >= 128 && c < 144 ? v * (1 + 0x1p-12) + 1e-3 : v;
                     }));
  for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
    const case_result r = run_verified("conv2d mb=1 ic=8 oc=192 ih=12 iw=12 kh=3 kw=3 dt=f32:f32:f32", b, seed);
    ASSERT_EQ(r.v.st, state::failed) << seed;
    EXPECT_NE(r.v.reason.find("beyond the bound"), std::string::npos) << r.v.reason;
    const std::int64_t c = r.v.outputs[0].m.worst[0].index[1];
    EXPECT_TRUE(c >= 128 && c < 144) << c;
  }
}

TEST(SampledVerification, ConvPlantedBugsFail) {
  const std::string base = "conv2d mb=2 ic=8 oc=160 ih=15 iw=13 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1";
  // Bugs that keep the output's shape, so that the verification, not a size mismatch, catches them.
  const std::vector<std::pair<std::string, kernel_fn>> bugs = {
      {"the padding put at the bottom", testing::simulating_as([](problem& p) {
         p.set("pt", std::int64_t(0));
         p.set("pb", std::int64_t(2));
       })},
      {"the padding put at the right", testing::simulating_as([](problem& p) {
         p.set("pl", std::int64_t(0));
         p.set("pr", std::int64_t(2));
       })},
      {"the last 8 channels negated", damaged_conv([](std::int64_t, std::int64_t c, std::int64_t, double v) {
         return c >= 152 ? -v : v;
       })},
      {"one position of one channel far off", damaged_conv([](std::int64_t n, std::int64_t c, std::int64_t q, double v) {
         return n == 1 && c == 77 && q == 20 ? v + 1e3 : v;
       })},
  };
  for (const auto& [name, k] : bugs) {
    function_backend b(name, k);
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
      const case_result r = run_verified(base + " bias=1 dt=f32:f32:f32", b, seed);
      EXPECT_EQ(r.v.st, state::failed) << name << " seed " << seed;
      EXPECT_TRUE(r.v.reason.find("bound") != std::string::npos || r.v.reason.find("checksums") != std::string::npos)
          << name << ": " << r.v.reason;
    }
  }
}

// --- attention: a sample of query rows; causal masks and windows as an explicit bias ----------

const std::vector<std::string> correct_attention_lines = {
    "attention b=1 h=2 lq=200 lk=150 d=32 dt=f32:f32:f32",
    "attention b=2 h=4 hkv=2 lq=130 lk=130 d=16 causal=top_left dt=bf16:f32:bf16",
    "attention b=1 h=2 lq=96 lk=160 d=32 causal=bottom_right mask=bias mask_shape=b_1_lq_lk dt=f32:f32:f32",
    "attention b=2 h=2 lq=144 lk=144 d=16 window_left=20 window_right=5 key_lengths=1 softcap=30 dt=f16:f32:f16",
    "attention b=1 h=3 lq=100 lk=90 d=8 dv=24 mask=bias mask_shape=1_h_lq_lk dt=f32:f32:f32",
};

TEST(SampledVerification, AttentionCorrectKernelsPassAtEverySeed) {
  expect_correct_kernels_pass(correct_attention_lines, false);
}

// Each op's sample above is a true sample, not every element ("N of M output elements").
TEST(SampledVerification, TheSamplesAreSmallerThanTheOutputs) {
  function_backend exact("exact", exact_then_rounded);
  for (const auto* lines : {&correct_conv_lines, &correct_attention_lines})
    for (const std::string& line : *lines) {
      const std::string sample = run_verified(line, exact, 1).verified.sample;
      long long sampled = 0, all = 0;
      ASSERT_EQ(std::sscanf(sample.c_str(), "%lld of %lld", &sampled, &all), 2) << sample;
      EXPECT_GT(sampled, 0) << line;
      EXPECT_LT(sampled, all / 2) << line << ": " << sample;
    }
}

// The positional masks carried into the sample's bias must mask what they masked: a kernel that
// aligns the causal diagonal wrongly, or drops the window, fails under the sample too.
TEST(SampledVerification, AttentionPlantedBugsFail) {
  const std::vector<std::tuple<std::string, std::string, std::function<void(problem&)>>> bugs = {
      {"causal aligned top-left instead of bottom-right", "attention b=1 h=2 lq=96 lk=200 d=16 causal=bottom_right",
       [](problem& p) { p.set("causal", std::string("top_left")); }},
      {"no causal mask", "attention b=1 h=2 lq=160 lk=160 d=16 causal=top_left",
       [](problem& p) { p.set("causal", std::string("none")); }},
      {"the window one key narrower", "attention b=1 h=2 lq=160 lk=160 d=16 window_left=16 window_right=0",
       [](problem& p) { p.set("window_left", std::int64_t(15)); }},
  };
  for (const auto& [name, line, change] : bugs) {
    function_backend b(name, testing::simulating_as(change));
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
      const case_result r = run_verified(line + " dt=f32:f32:f32", b, seed);
      EXPECT_EQ(r.v.st, state::failed) << name << " seed " << seed;
      EXPECT_NE(r.v.reason.find("bound"), std::string::npos) << name << ": " << r.v.reason;
      EXPECT_EQ(r.verified.method, "sampled") << name;
    }
  }
  // Rows 64..79 of head 1 wrong: a sampled row lies in every aligned band of 16.
  function_backend tile("rows", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    exact_then_rounded(p, in, out);
    const std::int64_t lq = p.get_int("lq"), dv = p.get_int("d");
    for (std::int64_t i = 64; i < 80; ++i)
      for (std::int64_t c = 0; c < dv; ++c) out[0].set_at((lq + i) * dv + c, out[0].at((lq + i) * dv + c) * 1.01);
  });
  for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
    const case_result r = run_verified("attention b=1 h=2 lq=256 lk=128 d=16 dt=f32:f32:f32", tile, seed);
    ASSERT_EQ(r.v.st, state::failed) << seed;
    const dims& at = r.v.outputs[0].m.worst[0].index;  // [b, h, i, c]
    EXPECT_EQ(at[1], 1);
    EXPECT_TRUE(at[2] >= 64 && at[2] < 80) << at[2];
  }
}

TEST(SampledVerification, AutoChoosesByFlopsAndRecordsWhy) {
  function_backend exact("exact", exact_then_rounded);
  const case_result small = run_verified("matmul m=64 n=64 k=64 dt=f32:f32:f32", exact, 1, "auto");
  EXPECT_EQ(small.verified.method, "full");
  EXPECT_TRUE(small.verified.why.empty());
  EXPECT_EQ(to_json_line(small).find("\"verification\""), std::string::npos);  // full: as records always were
  const case_result big = run_verified("matmul m=2048 n=2048 k=1024 dt=f32:f32:f32", exact, 1, "auto");
  EXPECT_EQ(big.verified.method, "sampled");
  EXPECT_NE(big.verified.why.find("FLOPs"), std::string::npos) << big.verified.why;
  const case_result back = from_json_line(to_json_line(big));
  EXPECT_EQ(back.verified.method, "sampled");
  EXPECT_EQ(back.verified.sample, big.verified.sample);
  EXPECT_EQ(back.verified.checksums, big.verified.checksums);
  // An op without a sample, or an alternative policy: verified in full, saying why.
  auto sim = make_sim_backend();
  const case_result relu = run_verified("relu shape=64x64 dt=f32", *sim, 1);
  EXPECT_EQ(relu.verified.method, "full");
  EXPECT_NE(relu.verified.why.find("relu has no sampled verification"), std::string::npos) << relu.verified.why;
  run_options fixed;
  fixed.verify = "sampled";
  fixed.pol = parse_policy("fixed:rtol=1e-3,atol=1e-3");
  const case_result f = run_case(parse_problem("matmul m=64 n=64 k=64 dt=f32:f32:f32"), exact, fixed);
  EXPECT_EQ(f.verified.method, "full");
  EXPECT_NE(f.verified.why.find("bound policy"), std::string::npos) << f.verified.why;
}

}  // namespace
}  // namespace opval
