// matmul's block-scaled contracts (OCP MX: MXFP8 e4m3/e5m2, MXFP6, MXFP4; NVFP4): hand-computed
// cases and the reference against a naive loop (transposed elements, scales down B's columns,
// broadcast batches), the fill's quantization, sim within bound at every seed, planted bugs
// caught at every seed, legitimate kernels passing at every seed, validation errors, and the
// plain-GEMM backends declining.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/suite_generator.hpp"
#include "ops/common_block/block_scaling.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/op_testing.hpp"
#include "opval/backend.hpp"
#include "opval/session.hpp"

namespace opval::test {
namespace {

using namespace opval::testing;

// One line per format, k = 4 blocks (MX) or 8 (NVFP4); NVFP4's per-tensor scales as scale_a,
// scale_b.
const std::string mxfp8_e4m3 = "matmul m=17 n=33 k=128 block=32 dt=f8_e4m3:f32:f32";
const std::string mxfp8_e5m2 = "matmul m=17 n=33 k=128 block=32 dt=f8_e5m2:f32:bf16";
const std::string mxfp6_e2m3 = "matmul m=17 n=33 k=128 block=32 dt=f6_e2m3:f32:f32";
const std::string mxfp6_e3m2 = "matmul m=17 n=33 k=128 block=32 dt=f6_e3m2:f32:f32";
const std::string mxfp4 = "matmul m=17 n=33 k=128 block=32 dt=f4_e2m1:f32:f32";
const std::string nvfp4 = "matmul m=17 n=33 k=128 block=16 block_scale=f8_e4m3 scale_a=0.5 scale_b=0.25 dt=f4_e2m1:f32:f32";

std::vector<std::string> formats() { return {mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, nvfp4}; }

// sum_p (A[i,p] A_scale[i,p/B]) (B[p,j] B_scale[p/B,j]) for one output, by logical index.
double naive_dot(const direct_case& c, std::int64_t block, dims ia, dims ib, std::int64_t i, std::int64_t j) {
  const tensor &a = c.in[0], &b = c.in[1], &sa = c.in[2], &sb = c.in[3];
  const std::int64_t k = a.shape().back();
  double s = 0;
  for (std::int64_t p = 0; p < k; ++p) {
    dims xa = ia, xb = ib, xsa = ia, xsb = ib;
    xa.insert(xa.end(), {i, p});
    xb.insert(xb.end(), {p, j});
    xsa.insert(xsa.end(), {i, p / block});
    xsb.insert(xsb.end(), {p / block, j});
    s += a.get(xa) * sa.get(xsa) * b.get(xb) * sb.get(xsb);
  }
  return s;
}

TEST(MatmulBlockScaled, HandComputed) {
  direct_case c = filled_case("matmul m=1 n=1 k=64 block=32 dt=f8_e4m3:f32:f32");
  c.in[0].assign(std::vector<double>(64, 1.5));
  c.in[1].assign(std::vector<double>(64, -2.0));
  c.in[2].assign(std::vector<double>{0x1p-3, 4.0});  // A_scale [1, 2]
  c.in[3].assign(std::vector<double>{2.0, 0x1p-10});  // B_scale [2, 1]
  // 32 * (1.5/8)(-2*2) + 32 * (1.5*4)(-2/1024) = -24 - 0.375
  EXPECT_EQ(c.reference_values(), (std::vector<double>{-24.375}));
  c.run_simulate();
  EXPECT_EQ(c.out[0].to_vector(), (std::vector<double>{-24.375}));
}

// The reference reads transposed elements, B's scales down its columns and broadcast batches as
// the naive loop does.
TEST(MatmulBlockScaled, ReferenceMatchesNaiveLoop) {
  for (const std::string line : {"matmul m=5 n=7 k=64 block=32 ta=1 tb=1 lda=9 batch_a=2x1 batch_b=3 "
                                 "dt=f8_e4m3xf8_e5m2:f32:f32",
                                 "matmul m=6 n=4 k=48 block=16 block_scale=f8_e4m3 tb=1 dt=f4_e2m1:f32:f32"}) {
    direct_case c = filled_case(line);
    const std::int64_t block = c.p.get_int("block");
    const std::vector<double> ref = c.reference_values();
    for (std::int64_t at = 0; at < c.ref[0].numel(); ++at) {
      const dims idx = c.ref[0].unravel(at);
      const dims batch(idx.begin(), idx.end() - 2);
      auto own = [&](const tensor& t) {  // this operand's batch index (right-aligned, 1 broadcasts)
        const std::size_t rank = t.shape().size() - 2;
        dims x(batch.end() - static_cast<std::ptrdiff_t>(rank), batch.end());
        for (std::size_t d = 0; d < rank; ++d)
          if (t.shape()[d] == 1) x[d] = 0;
        return x;
      };
      const double want = naive_dot(c, block, own(c.in[0]), own(c.in[1]), idx[idx.size() - 2], idx.back());
      EXPECT_NEAR(ref[static_cast<std::size_t>(at)], want, 1e-12 * (1 + std::fabs(want))) << line << " at " << at;
    }
  }
}

// The fill quantizes as a quantizer does: every scale is the format's scale of its block's
// amax (elements reach the top binade of the element type), and the scales differ from block
// to block.
TEST(MatmulBlockScaled, FillUsesTheFormatsRangeAndVaryingScales) {
  for (const std::string& line : formats()) {
    direct_case c = filled_case(line);
    const std::int64_t block = c.p.get_int("block");
    const ops::common_block::block_scaling f{block, c.in[2].type(), c.p.dt.src};
    const double max = traits(f.element).max;
    const std::vector<double> a = c.in[0].to_vector(), sa = c.in[2].to_vector();
    std::vector<double> distinct;
    for (std::size_t blk = 0; blk < sa.size(); ++blk) {
      double amax = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(block); ++i)
        amax = std::max(amax, std::fabs(a[blk * static_cast<std::size_t>(block) + i]));
      EXPECT_GT(amax, max / 8) << line << " block " << blk << ": the elements do not use the format's range";
      if (std::find(distinct.begin(), distinct.end(), sa[blk]) == distinct.end()) distinct.push_back(sa[blk]);
    }
    EXPECT_GE(distinct.size(), 5u) << line << ": the scales hardly vary";
  }
}

TEST(MatmulBlockScaled, SimWithinBoundAtEverySeed) {
  auto sim = make_backend("sim");
  std::vector<std::string> lines = formats();
  lines.push_back("matmul m=9 n=12 k=96 block=32 ta=1 tb=1 batch_a=2x1 batch_b=3 dt=f8_e4m3xf8_e5m2:f32:f32");
  lines.push_back("matmul m=9 n=12 k=64 block=16 block_scale=f8_e4m3 beta=0.5 bias=1 act=relu dt=f4_e2m1:f32:bf16");
  expect_at_every_seed(*sim, lines, state::passed);
}

// A's scales changed by `f(scales, index)` (as a kernel misreading them sees them).
kernel_fn a_scales_read_as(std::function<double(const tensor&, const dims&)> f) {
  return simulating_on([f](const problem& p, std::vector<tensor>& x) {
    tensor& s = x[input_index(p, "A_scale")];
    s = remapped(s, f);
  });
}

TEST(MatmulBlockScaled, PlantedBugsFailAtEverySeed) {
  const std::vector<std::string> lines = {mxfp8_e4m3, mxfp6_e3m2, mxfp4, nvfp4};
  expect_fails("a_scale_ignored", a_scales_read_as([](const tensor&, const dims&) { return 1.0; }), lines);
  // Each row's block kb scaled by block kb+1's scale (the last by the first).
  expect_fails("scale_of_the_next_block", a_scales_read_as([](const tensor& t, const dims& i) {
                 dims j = i;
                 j.back() = (j.back() + 1) % t.shape().back();
                 return t.get(j);
               }),
               lines);
  // A_scale [m, k/B] read as if stored [k/B, m]: row i's block kb from flat position kb*m + i.
  expect_fails("a_scales_along_the_wrong_axis", a_scales_read_as([](const tensor& t, const dims& i) {
                 const std::int64_t m = t.shape()[0], nb = t.shape()[1], flat = i[1] * m + i[0];
                 return t.get(dims{flat / nb, flat % nb});
               }),
               lines);
  // e8m0 decoded as 2^(e - 126) instead of 2^(e - 127): every scale of A and B doubled.
  expect_fails("e8m0_bias_126", simulating_on([](const problem& p, std::vector<tensor>& x) {
                 for (const char* name : {"A_scale", "B_scale"}) {
                   tensor& s = x[input_index(p, name)];
                   s = remapped(s, [](const tensor& t, const dims& i) { return 2 * t.get(i); });
                 }
               }),
               {mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp4});
}

// Legitimate kernels: each reads the elements and scales itself (logical indices, so any
// layout), accumulates in f32 in its own order, and applies the per-tensor scales in f32.
using accumulate_fn = std::function<float(const std::vector<float>& a_elems, const std::vector<float>& b_elems,
                                          const std::vector<float>& a_scales, const std::vector<float>& b_scales,
                                          std::int64_t block)>;

kernel_fn block_scaled_kernel(accumulate_fn acc) {
  return [acc](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const std::int64_t m = p.get_int("m"), n = p.get_int("n"), k = p.get_int("k"), block = p.get_int("block");
    const float scale = static_cast<float>(p.get_real("scale_a")) * static_cast<float>(p.get_real("scale_b"));
    std::vector<double> y(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::vector<float> a(static_cast<std::size_t>(k)), b(a.size()), sa(static_cast<std::size_t>(k / block)),
            sb(sa.size());
        for (std::int64_t q = 0; q < k; ++q) {
          a[static_cast<std::size_t>(q)] = static_cast<float>(in[0].get(dims{i, q}));
          b[static_cast<std::size_t>(q)] = static_cast<float>(in[1].get(dims{q, j}));
        }
        for (std::int64_t q = 0; q < k / block; ++q) {
          sa[static_cast<std::size_t>(q)] = static_cast<float>(in[2].get(dims{i, q}));
          sb[static_cast<std::size_t>(q)] = static_cast<float>(in[3].get(dims{q, j}));
        }
        y[static_cast<std::size_t>(i * n + j)] = acc(a, b, sa, sb, block) * scale;
      }
    out[0].assign(y);
  };
}

float pairwise(const std::vector<float>& v, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return v[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return pairwise(v, lo, mid) + pairwise(v, mid, hi);
}

TEST(MatmulBlockScaled, LegitimateKernelsPassAtEverySeed) {
  const std::vector<std::string> lines = {"matmul m=17 n=33 k=256 block=32 ta=1 tb=1 dt=f8_e4m3:f32:f32",
                                          "matmul m=17 n=33 k=256 block=32 dt=f6_e3m2:f32:bf16",
                                          "matmul m=17 n=33 k=256 block=32 dt=f4_e2m1:f32:f32",
                                          "matmul m=17 n=33 k=256 block=16 block_scale=f8_e4m3 scale_a=0.5 "
                                          "scale_b=0.25 dt=f4_e2m1:f32:f32"};
  // Dequantize to f32, then an f32 GEMM in k order (product, then sum, each rounded).
  expect_passes_at_every_seed("dequantize_then_sgemm",
                              block_scaled_kernel([](const auto& a, const auto& b, const auto& sa, const auto& sb,
                                                     std::int64_t block) {
                                float s = 0;
                                for (std::size_t q = 0; q < a.size(); ++q) {
                                  const float x = a[q] * sa[q / block], w = b[q] * sb[q / block];
                                  s += x * w;
                                }
                                return s;
                              }),
                              lines);
  // Each block's raw products summed in f32, the partial sum scaled by A's then B's scale.
  expect_passes_at_every_seed("block_partial_sums",
                              block_scaled_kernel([](const auto& a, const auto& b, const auto& sa, const auto& sb,
                                                     std::int64_t block) {
                                float s = 0;
                                for (std::size_t blk = 0; blk < sa.size(); ++blk) {
                                  float part = 0;
                                  for (std::size_t q = blk * block; q < (blk + 1) * block; ++q) part += a[q] * b[q];
                                  s += (part * sa[blk]) * sb[blk];
                                }
                                return s;
                              }),
                              lines);
  // The scaled products summed pairwise in f32.
  expect_passes_at_every_seed("pairwise",
                              block_scaled_kernel([](const auto& a, const auto& b, const auto& sa, const auto& sb,
                                                     std::int64_t block) {
                                std::vector<float> t(a.size());
                                for (std::size_t q = 0; q < a.size(); ++q)
                                  t[q] = (a[q] * sa[q / block]) * (b[q] * sb[q / block]);
                                return pairwise(t, 0, t.size());
                              }),
                              lines);
}

TEST(MatmulBlockScaled, BadInputNamesTheProblem) {
  const struct {
    const char* line;
    const char* why;
  } cases[] = {
      {"matmul m=2 n=2 k=48 block=32 dt=f8_e4m3:f32:f32", "block=32 must divide k=48"},
      {"matmul m=2 n=2 k=32 dt=f4_e2m1:f32:f32", "is a block-scaled contract: it needs block=32"},
      {"matmul m=2 n=2 k=32 dt=f6_e2m3xf4_e2m1:f32:bf16", "is a block-scaled contract"},
      {"matmul m=2 n=2 k=32 block=32 dt=f32:f32:f32", "block=32 needs a block-scaled contract"},
      {"matmul m=2 n=2 k=32 block=32 dt=f4_e2m1:f32:i8", "block=32 needs a block-scaled contract"},
      {"matmul m=2 n=2 k=32 block=32 dt=f4_e2m1:f16:f16", "block=32 needs a block-scaled contract"},
      {"matmul m=2 n=2 k=32 block_scale=f8_e4m3 dt=f8_e4m3:f32:f32", "block_scale=f8_e4m3 needs block > 0"},
  };
  for (const auto& c : cases) {
    const std::string e = validation_error(c.line);
    EXPECT_NE(e.find(c.why), std::string::npos) << c.line << ": " << e;
  }
  EXPECT_EQ(validation_error("matmul m=2 n=2 k=32 block=32 dt=f6_e2m3xf4_e2m1:f32:f16"), "");
  EXPECT_EQ(validation_error("matmul m=2 n=2 k=32 dt=f8_e4m3:f32:f32"), "") << "fp8 per tensor stays";
}

TEST(MatmulBlockScaled, OperandsAndContracts) {
  const problem p = parse_problem("matmul m=3 n=5 k=64 block=32 beta=1 bias=1 batch_a=2 dt=f8_e4m3:f32:f32");
  const auto in = p.spec().inputs(p);
  ASSERT_EQ(in.size(), 6u);
  EXPECT_EQ(in[2].name, "A_scale");
  EXPECT_EQ(in[2].shape, (dims{2, 3, 2}));
  EXPECT_EQ(in[2].type, dtype::f8_e8m0);
  EXPECT_EQ(in[3].name, "B_scale");
  EXPECT_EQ(in[3].shape, (dims{2, 5}));
  EXPECT_EQ(in[4].name, "C");
  EXPECT_EQ(in[5].name, "bias");
  const auto contracts = p.spec().contracts();
  for (const std::string& c : ops::common_gemm::block_scaled_contracts())
    EXPECT_NE(std::find(contracts.begin(), contracts.end(), c), contracts.end()) << c;
}

// The generated suite gives the block-scaled contracts valid problems: a block dividing k,
// MX and NVFP4 scales both; and the fp8 contracts both per-tensor and block-scaled cases.
TEST(MatmulBlockScaled, GeneratedSuiteCoversTheBlockScaledContracts) {
  const auto sim = make_backend("sim");
  const support_query supports = [&](const problem& p) { return sim->supports(p); };
  for (const char* dt : {"f4_e2m1:f32:f32", "f6_e3m2:f32:bf16", "f8_e4m3:f32:f32"}) {
    generation_options o;
    o.contracts = {dt};
    const generated_suite g = generate_suite(find_op("matmul"), supports, o);
    int mx = 0, nvfp4 = 0, plain = 0;
    for (const located_problem& lp : g.problems) {
      const std::int64_t block = lp.prob.get_int("block");
      if (block == 0) {
        ++plain;
        continue;
      }
      EXPECT_EQ(lp.prob.get_int("k") % block, 0) << lp.prob.to_string();
      (lp.prob.get_choice("block_scale") == "f8_e4m3" ? nvfp4 : mx) += 1;
    }
    EXPECT_GT(nvfp4, 0) << dt;
    if (std::string(dt) == "f8_e4m3:f32:f32") {  // block scaling is one feature among many
      EXPECT_GT(mx, 0) << dt;
      EXPECT_GT(plain, 10) << dt;
    } else {  // every case block-scaled, MX where no value sets the block
      EXPECT_GT(mx, 10) << dt;
      EXPECT_EQ(plain, 0) << dt;
    }
  }
}

// The plain-GEMM backends cannot express block scaling: they decline it (UNIMPLEMENTED with
// the reason), never run it as a plain GEMM.
TEST(MatmulBlockScaled, PlainGemmBackendsDecline) {
  const problem p = parse_problem(mxfp8_e4m3);
  EXPECT_NE(ops::common_gemm::non_gemm_feature(p, ops::common_gemm::read_epilogue(p, true)).find("block scaling"),
            std::string::npos);
  for (const char* name : {"openblas", "blis", "onednn", "opencl"}) {
    std::unique_ptr<backend> b;
    try {
      b = make_backend(name);
    } catch (const error&) {
      continue;  // not in this build
    }
    const support s = b->supports(p);
    EXPECT_FALSE(s.ok) << name;
    EXPECT_FALSE(s.reason.empty()) << name;
    // oneDNN runs fp8 GEMMs, so it must decline on the block scaling itself (the BLAS and
    // OpenCL backends already decline the fp8 contract).
    if (std::string(name) == "onednn")
      EXPECT_NE(s.reason.find("block"), std::string::npos) << name << ": " << s.reason;
  }
}

}  // namespace
}  // namespace opval::test
