// matmul: hand-computed cases, layout/broadcast equivalences, metamorphic relations, the
// reference GEMM against a naive loop, sim within bound, suites end-to-end, planted bugs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ops/common_gemm/gemm_core.hpp"
#include "ops/common_gemm/reference_gemm.hpp"
#include "ops/gemm_testing.hpp"
#include "ops/op_testing.hpp"
#include "opval/error.hpp"

namespace opval::test {
namespace {

using namespace opval::testing;
using ops::common_gemm::epilogue_inputs;

void set_values(tensor& t, const std::vector<double>& v) { t.assign(v); }

TEST(matmul, hand_computed_epilogue) {
  direct_case c = filled_case("matmul m=2 n=2 k=3 alpha=2 bias=1 act=relu residual=1 dt=f64:f64:f64");
  set_values(c.in[0], {1, 2, 3, 4, 5, 6});
  set_values(c.in[1], {1, 0, 0, 1, 1, -1});
  set_values(c.in[2], {1, 0.5});
  set_values(c.in[3], {1, 2, 3, 4});
  // alpha*AB = [[8,-2],[20,-2]]; + bias -> [[9,-1.5],[21,-1.5]]; relu; + residual.
  EXPECT_EQ(c.reference_values(), (std::vector<double>{10, 2, 24, 4}));
  c.run_simulate();
  EXPECT_EQ(c.out[0].to_vector(), (std::vector<double>{10, 2, 24, 4}));
}

TEST(matmul, hand_computed_beta_and_transposes) {
  // Logical A = [[1,2],[3,4]] stored transposed with lda=3; B = I stored transposed.
  direct_case c = filled_case("matmul m=2 n=2 k=2 ta=1 lda=3 tb=1 beta=0.5 ldc=4 dt=f64:f64:f64");
  set_values(c.in[0], {1, 2, 3, 4});
  set_values(c.in[1], {1, 0, 0, 1});
  set_values(c.in[2], {2, 2, 2, 2});
  EXPECT_EQ(c.in[0].strides(), (dims{1, 3}));
  EXPECT_EQ(c.reference_values(), (std::vector<double>{2, 3, 4, 5}));
}

TEST(matmul, hand_computed_integer_zero_points) {
  direct_case c = filled_case("matmul m=1 n=1 k=2 zp_a=128 scale_a=0.5 scale_b=0.25 dt=u8xi8:i32:f32");
  set_values(c.in[0], {130, 126});
  set_values(c.in[1], {2, 3});
  // (2*2 + (-2)*3) * 0.125 = -0.25
  EXPECT_EQ(c.reference_values(), (std::vector<double>{-0.25}));
  c.run_simulate();
  EXPECT_EQ(c.out[0].to_vector(), (std::vector<double>{-0.25}));
}

TEST(matmul, integer_dst_saturates_in_reference) {
  direct_case c = filled_case("matmul m=1 n=2 k=1 scale_dst=0.5 zp_dst=3 dt=i8xi8:i32:i8");
  set_values(c.in[0], {100});
  set_values(c.in[1], {1, -1});
  EXPECT_EQ(c.reference_values(), (std::vector<double>{127, -128 + 0.0 * 0 + 0}));  // 203 and -197 clamp
}

TEST(matmul, layouts_give_the_same_reference) {
  direct_case tight = filled_case("matmul m=7 n=13 k=31 dt=f64:f64:f64");
  direct_case strided = filled_case("matmul m=7 n=13 k=31 ta=1 tb=1 lda=9 ldb=40 ldc=20 dt=f64:f64:f64");
  for (int i = 0; i < 2; ++i) strided.in[i].assign(tight.in[i].to_vector());
  EXPECT_EQ(tight.reference_values(), strided.reference_values());
}

TEST(matmul, broadcast_batches_match_single_products) {
  direct_case b = filled_case("matmul m=3 n=4 k=5 batch_a=2x1 batch_b=3 dt=f64:f64:f64");
  const auto all = b.reference_values();
  ASSERT_EQ(b.ref[0].shape(), (dims{2, 3, 3, 4}));
  const auto a = b.in[0].to_vector(), bb = b.in[1].to_vector();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      std::vector<double> c(12);
      ops::matmul::reference_gemm(3, 4, 5, a.data() + i * 15, bb.data() + j * 20, c.data());
      for (int e = 0; e < 12; ++e) EXPECT_EQ(all[(i * 3 + j) * 12 + e], c[e]);
    }
}

TEST(matmul, metamorphic_linearity_and_row_permutation) {
  direct_case c = filled_case("matmul m=9 n=11 k=17 dt=f64:f64:f64");
  const auto base = c.reference_values();
  auto a = c.in[0].to_vector();
  for (double& x : a) x *= 2;
  c.in[0].assign(a);
  const auto doubled = c.reference_values();
  for (std::size_t i = 0; i < base.size(); ++i) EXPECT_EQ(doubled[i], 2 * base[i]);
  // Reverse the rows of A: the rows of the output reverse.
  std::vector<double> rev(a.size());
  for (int i = 0; i < 9; ++i)
    for (int k = 0; k < 17; ++k) rev[i * 17 + k] = a[(8 - i) * 17 + k];
  c.in[0].assign(rev);
  const auto permuted = c.reference_values();
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 11; ++j) EXPECT_EQ(permuted[i * 11 + j], doubled[(8 - i) * 11 + j]);
}

TEST(matmul, reference_gemm_matches_naive_loop) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> nd;
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 25, 3}, {33, 47, 200}, {130, 70, 400}, {9, 300, 17}}) {
    std::vector<double> a(m * k), b(k * n), c(m * n), want(m * n, 0.0);
    for (auto& x : a) x = nd(rng);
    for (auto& x : b) x = nd(rng);
    // A read transposed (column-major) to exercise the strided form.
    std::vector<double> at(k * m);
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p) at[p * m + i] = a[i * k + p];
    ops::matmul::reference_gemm(m, n, k, at.data(), 1, m, b.data(), n, 1, c.data(), n);
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p)
        for (int j = 0; j < n; ++j) want[i * n + j] += a[i * k + p] * b[p * n + j];
    for (int i = 0; i < m * n; ++i) EXPECT_NEAR(c[i], want[i], 1e-12 * k) << m << "x" << n << "x" << k;
  }
}

// Whichever micro-kernel this CPU picks (AVX-512, AVX2 or scalar), an element whose K fits in
// one cache block is one fma per term in order: the reference, and the golden records and
// verdicts built on it, are the same on every machine.
TEST(matmul, reference_gemm_is_one_fma_per_term_in_order_on_every_isa) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> nd;
  for (auto [m, n, k] : {std::tuple{8, 24, 192}, {13, 50, 77}, {1, 3, 5}}) {
    std::vector<double> a(m * k), b(k * n), c(m * n), want(m * n, 0.0);
    for (auto& x : a) x = nd(rng);
    for (auto& x : b) x = nd(rng);
    ops::matmul::reference_gemm(m, n, k, a.data(), b.data(), c.data());
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p)
        for (int j = 0; j < n; ++j) want[i * n + j] = std::fma(a[i * k + p], b[p * n + j], want[i * n + j]);
    for (int i = 0; i < m * n; ++i) ASSERT_EQ(c[i], want[i]) << m << "x" << n << "x" << k << " element " << i;
  }
}

TEST(matmul, sim_error_within_bound_for_random_cases) {
  const char* contracts[] = {"f32:f32:f32", "f32@tf32:f32:f32", "f32@bf16:f32:f32", "bf16:f32:bf16", "f16:f32:f16",
                             "f16:f16:f16", "f8_e4m3:f32:bf16 scale_a=0.5 scale_b=2", "f64:f64:f64",
                             "u8xi8:i32:f32 zp_a=120 scale_a=0.01 scale_b=0.03", "i8xi8:i32:i8 scale_a=0.01 scale_b=0.01 scale_dst=0.1"};
  const char* extras[] = {"", " alpha=0.7 beta=-1.3 bias=1", " bias=1 act=gelu residual=1", " act=silu tb=1", " act=gelu_tanh ta=1"};
  std::mt19937 rng(3);
  int count = 0;
  for (const char* dt : contracts)
    for (const char* x : extras) {
      const int m = 1 + rng() % 40, n = 1 + rng() % 40, k = 1 + rng() % 150;
      std::string line = "matmul m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + x;
      std::string d = dt;
      const auto space = d.find(' ');
      line += (space == std::string::npos ? "" : d.substr(space)) + " dt=" + d.substr(0, space);
      direct_case c = filled_case(line, 100 + count++);
      const double ratio = c.sim_error_over_bound();
      EXPECT_LE(ratio, 1.0) << line;
    }
}

TEST(matmul, integer_accumulation_is_exact) {
  direct_case c = filled_case("matmul m=8 n=9 k=300 zp_a=128 dt=u8xi8:i32:i32");
  const auto want = c.reference_values();
  c.run_simulate();
  EXPECT_EQ(c.out[0].to_vector(), want);
}

TEST(matmul, exact_fill_makes_sim_equal_reference) {
  direct_case c = filled_case("matmul m=17 n=33 k=65 alpha=0.5 beta=2 bias=1 act=relu residual=1 dt=f32:f32:f32 fill=exact");
  EXPECT_TRUE(c.ft.exact);
  const auto want = c.reference_values();
  c.run_simulate();
  EXPECT_EQ(c.out[0].to_vector(), want);
  // Not exact once a step must round: gelu, or a scale that is not a power of two.
  EXPECT_FALSE(filled_case("matmul m=4 n=4 k=4 act=gelu dt=f32:f32:f32 fill=exact").ft.exact);
  EXPECT_FALSE(filled_case("matmul m=4 n=4 k=4 alpha=0.3 dt=f32:f32:f32 fill=exact").ft.exact);
  EXPECT_TRUE(filled_case("matmul m=4 n=4 k=4 dt=f32:f32:f32 fill=positive").ft.same_sign);
  EXPECT_FALSE(filled_case("matmul m=4 n=4 k=4 beta=-1 dt=f32:f32:f32 fill=positive").ft.same_sign);
}

TEST(matmul, activation_lipschitz_constants_bound_the_derivative) {
  using namespace ops::common_gemm;
  for (activation a : {activation::relu, activation::gelu, activation::gelu_tanh, activation::silu}) {
    double worst = 0;
    for (double x = -12; x <= 12; x += 1e-3) {
      const double h = 1e-6;
      worst = std::max(worst, std::abs(apply_activation(a, x + h) - apply_activation(a, x - h)) / (2 * h));
    }
    EXPECT_LE(worst, activation_lipschitz(a) * (1 + 1e-6)) << int(a);
    EXPECT_GT(worst, activation_lipschitz(a) - 0.01) << int(a);  // and tightly
  }
}

TEST(matmul, bound_is_tight_for_f32) {
  direct_case c = filled_case("matmul m=64 n=64 k=256 dt=f32:f32:f32");
  const double ratio = c.sim_error_over_bound();
  EXPECT_GT(ratio, 0.01);  // not vacuous: errors reach at least 1% of the bound
  // The random-sign bound keeps a long sum's bound nearer its errors (docs/NUMERICS.md): 0.017
  // of it at K = 4096, where the classic gamma*sum|a||b| left 0.0027.
  EXPECT_GT(filled_case("matmul m=8 n=8 k=4096 dt=f32:f32:f32").sim_error_over_bound(), 0.01);
}

TEST(matmul, suites_parse_and_validate) {
  const op_spec& s = find_op("matmul");
  for (const char* tag : {"smoke", "regression"}) {
    const auto lines = s.suite(tag);
    EXPECT_FALSE(lines.empty());
    for (const auto& l : lines) {
      problem p = parse_problem(l);
      EXPECT_NO_THROW(s.validate(p)) << l;
      EXPECT_EQ(parse_problem(p.to_string()), p) << l;
    }
  }
}

TEST(matmul, unsupported_contract_and_bad_attributes_throw) {
  const op_spec& s = find_op("matmul");
  EXPECT_THROW(s.validate(parse_problem("matmul m=2 n=2 k=2 dt=f16:f16:f32")), opval::error);
  EXPECT_THROW(s.validate(parse_problem("matmul m=2 n=2 k=2 lda=1")), opval::error);
  EXPECT_THROW(s.validate(parse_problem("matmul m=2 n=2 k=2 batch_a=2 batch_b=3")), opval::error);
  EXPECT_THROW(s.validate(parse_problem("matmul m=2 n=2 k=2 zp_a=3")), opval::error);
}

TEST(matmul, smoke_suite_passes_under_sim) { expect_suite_passes_under_sim("smoke", {"matmul"}); }
TEST(matmul, regression_suite_passes_under_sim) { expect_suite_passes_under_sim("regression", {"matmul"}); }

// --- planted bugs and legitimate variants ---------------------------------------------

// The sim result computed with A's last k column zeroed: the kernel drops the last term.
std::vector<double> sim_dropping_last_k(const problem& p, std::span<const tensor> in) {
  std::vector<tensor> copy(in.begin(), in.end());
  copy[0] = in[0].contiguous();
  const auto& shape = copy[0].shape();
  const std::int64_t k = shape.back();
  for (std::int64_t i = k - 1; i < copy[0].numel(); i += k) copy[0].set_at(i, 0.0);
  const auto outs = p.spec().outputs(p);
  std::vector<tensor> out{tensor(outs[0].type, outs[0].shape)};
  p.spec().simulate(p, copy, out);
  return out[0].to_vector();
}

void simulate_as(const problem& p, std::span<const tensor> in, std::span<tensor> out, const contract& c) {
  problem q = p;
  q.dt = c;
  p.spec().simulate(q, in, out);
}

TEST(matmul_planted, dropped_last_k_term_fails) {
  function_backend b("drop_k", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    out[0].assign(sim_dropping_last_k(p, in));
  });
  const auto r = run_with("matmul m=20 n=24 k=64 dt=f32:f32:f32", b);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_FALSE(r.v.reason.empty());
}

// Rows beyond the last full 16-row tile drop the last k term.
kernel_fn tile_edge_bug() {
  return [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    const std::int64_t m = p.get_int("m"), n = p.get_int("n");
    auto good = out[0].to_vector();
    const auto bad = sim_dropping_last_k(p, in);
    for (std::int64_t i = m / 16 * 16; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) good[i * n + j] = bad[i * n + j];
    out[0].assign(good);
  };
}

TEST(matmul_planted, tile_edge_bug_fails_only_off_multiples_of_16) {
  function_backend b("edge", tile_edge_bug());
  EXPECT_EQ(run_with("matmul m=32 n=32 k=48 dt=f32:f32:f32", b).v.st, state::passed);
  expect_fails_at_every_seed("edge", tile_edge_bug(), {"matmul m=33 n=32 k=48 dt=f32:f32:f32", "matmul m=17 n=33 k=65 dt=bf16:f32:bf16"});
}

TEST(matmul_planted, f16_accumulation_instead_of_f32_fails) {
  function_backend b("f16acc", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    simulate_as(p, in, out, parse_contract_types("f16:f16:f16"));
  });
  const auto r = run_with("matmul m=32 n=32 k=512 dt=f16:f32:f16", b);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
}

TEST(matmul_planted, tf32_inputs_under_an_f32_contract_fail_at_every_seed) {
  // A kernel rounding its inputs to tf32 (cuBLAS's TF32 mode) while it claims f32: at K = 4096
  // its errors stay under the classic bound (about 0.3 of it); the random-sign bound sees them.
  function_backend b("tf32", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    simulate_as(p, in, out, parse_contract_types("f32@tf32:f32:f32"));
  });
  const char* line = "matmul m=8 n=8 k=4096 dt=f32:f32:f32";
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    EXPECT_EQ(run_with(line, b, seed).v.st, state::failed) << "seed " << seed;
    const case_result classic = run_with(line, b, seed, parse_policy("bound:random_data=0"));
    EXPECT_EQ(classic.v.st, state::passed) << "seed " << seed << ": the classic bound let it through: "
                                           << classic.v.reason;
  }
}

TEST(matmul_planted, truncated_output_fails_the_bias_test) {
  function_backend b("rz", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    contract c = p.dt;
    c.dst_round = rounding::rz;
    simulate_as(p, in, out, c);
  });
  const auto r = run_with("matmul m=64 n=64 k=32 bias=1 dt=bf16:f32:bf16", b);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_NE(r.v.reason.find("bias"), std::string::npos) << r.v.reason;
}

TEST(matmul_planted, ignored_alpha_fails_at_every_seed) {
  // The kernel computes A.B (+ epilogue) with alpha = 1, whatever the problem says.
  expect_fails_at_every_seed("alpha_ignored", simulating_as([](problem& q) { q.set("alpha", 1.0); }),
                             {"matmul m=16 n=16 k=16 alpha=0.5 dt=f32:f32:f32", "matmul m=3 n=5 k=7 alpha=-2 bias=1 dt=bf16:f32:bf16",
                              "matmul m=8 n=8 k=64 alpha=1.5 dt=f16:f32:f16 fill=uniform"});
}

// --- one planted bug per feature of the generated suites' table, caught at seeds 1..8 --------

TEST(matmul_planted, epilogue_bugs_fail_at_every_seed) {
  expect_epilogue_bugs_fail_at_every_seed("matmul m=17 n=33 k=65",
                                          "matmul m=17 n=33 k=65 dt=u8xi8:i32:f32 scale_a=0.01 scale_b=0.02 zp_a=128");
}

TEST(matmul_planted, ignored_beta_fails_at_every_seed) {
  expect_fails_at_every_seed("beta_ignored", ignoring_input("C"),
                             {"matmul m=17 n=33 k=65 beta=0.5 dt=f32:f32:f32", "matmul m=7 n=13 k=31 beta=1 bias=1 dt=bf16:f32:bf16"});
}

TEST(matmul_planted, ignored_transpose_of_b_fails_at_every_seed) {
  // tb=1 stores B as its transpose ([n][k] in memory); the kernel reads that memory as [k][n].
  expect_fails_at_every_seed("tb_ignored", simulating_on([](const problem& p, std::vector<tensor>& x) {
                               const std::int64_t n = p.get_int("n"), k = p.get_int("k");
                               x[1] = remapped(x[1], [n, k](const tensor& b, const dims& i) {
                                 const std::int64_t at = i[0] * n + i[1];  // where it reads
                                 return b.get(dims{at % k, at / k});
                               });
                             }),
                             {"matmul m=17 n=33 k=65 tb=1 dt=f32:f32:f32", "matmul m=7 n=13 k=31 ta=1 tb=1 dt=bf16:f32:bf16"});
}

TEST(matmul_planted, ignored_leading_dimension_fails_at_every_seed) {
  // A's rows lie lda apart; the kernel reads them k apart (the padding read as 0).
  expect_fails_at_every_seed("lda_ignored", simulating_on([](const problem& p, std::vector<tensor>& x) {
                               const std::int64_t k = p.get_int("k"), lda = p.get_int("lda");
                               x[0] = remapped(x[0], [k, lda](const tensor& a, const dims& i) {
                                 const std::int64_t at = i[0] * k + i[1];
                                 return at % lda < k ? a.get(dims{at / lda, at % lda}) : 0.0;
                               });
                             }),
                             {"matmul m=17 n=33 k=65 lda=70 ldb=40 ldc=37 dt=f32:f32:f32",
                              "matmul m=7 n=13 k=31 lda=40 dt=bf16:f32:bf16"});
}

TEST(matmul_planted, batch_broadcast_of_the_wrong_operand_fails_at_every_seed) {
  // Every product reads B's first matrix.
  expect_fails_at_every_seed("b_batch_0", simulating_on([](const problem&, std::vector<tensor>& x) {
                               x[1] = remapped(x[1], [](const tensor& b, const dims& i) {
                                 dims first = i;
                                 for (std::size_t d = 0; d + 2 < first.size(); ++d) first[d] = 0;
                                 return b.get(first);
                               });
                             }),
                             {"matmul m=17 n=33 k=65 batch_a=2x1 batch_b=3 dt=f32:f32:f32",
                              "matmul m=7 n=13 k=31 batch_b=2x3 dt=bf16:f32:bf16"});
}

TEST(matmul_planted, empty_k_left_unwritten_fails_at_every_seed) {
  // k = 0: the kernel returns early and leaves the output as it found it, not alpha.0 + epilogue.
  expect_fails_at_every_seed("k0_unwritten", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
                               if (p.get_int("k") > 0) p.spec().simulate(p, in, out);
                             },
                             {"matmul m=4 n=5 k=0 dt=f32:f32:f32", "matmul m=17 n=33 k=0 bias=1 dt=bf16:f32:bf16"});
}

TEST(matmul_planted, all_zero_output_is_mistrusted) {
  function_backend b("zero", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    out[0].assign(std::vector<double>(out[0].numel(), 0.0));
  });
  EXPECT_EQ(run_with("matmul m=16 n=16 k=16 dt=f32:f32:f32", b).v.st, state::mistrusted);
}

/// Summation orders a correct kernel may use, in f32.
enum class sum_order { forward, reversed, split_k, pairwise, blocked, kahan };

/// The f32 dot product of x and y in the given order (products rounded by fmaf).
float dot_in_order(const std::vector<float>& x, const std::vector<float>& y, std::size_t lo, std::size_t hi,
                   sum_order o) {
  switch (o) {
    case sum_order::forward: {
      float s = 0;
      for (std::size_t i = lo; i < hi; ++i) s = std::fmaf(x[i], y[i], s);
      return s;
    }
    case sum_order::reversed: {
      float s = 0;
      for (std::size_t i = hi; i-- > lo;) s = std::fmaf(x[i], y[i], s);
      return s;
    }
    case sum_order::split_k: {
      const std::size_t mid = lo + (hi - lo) / 2;
      return dot_in_order(x, y, lo, mid, sum_order::forward) + dot_in_order(x, y, mid, hi, sum_order::forward);
    }
    case sum_order::pairwise: {
      if (hi - lo <= 4) return dot_in_order(x, y, lo, hi, sum_order::forward);
      const std::size_t mid = lo + (hi - lo) / 2;
      return dot_in_order(x, y, lo, mid, sum_order::pairwise) + dot_in_order(x, y, mid, hi, sum_order::pairwise);
    }
    case sum_order::blocked: {  // partial sums of 16 terms (a register tile), added in order
      float s = 0;
      for (std::size_t b = lo; b < hi; b += 16) s += dot_in_order(x, y, b, std::min(hi, b + 16), sum_order::forward);
      return s;
    }
    case sum_order::kahan: {  // compensated: more accurate than the contract asks
      float s = 0, c = 0;
      for (std::size_t i = lo; i < hi; ++i) {
        const float t = std::fmaf(x[i], y[i], -c), u = s + t;
        c = (u - s) - t;
        s = u;
      }
      return s;
    }
  }
  return 0;
}

// A float kernel (f32 accumulation) summing in `order`, then the contract's epilogue.
kernel_fn variant(sum_order order) {
  return [order](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const auto e = ops::common_gemm::read_epilogue(p, true);
    const std::int64_t m = p.get_int("m"), n = p.get_int("n"), k = p.get_int("k");
    const auto a = in[0].to_vector(), b = in[1].to_vector();
    const auto bias = e.has_bias ? in[2].to_vector() : std::vector<double>{};
    std::vector<double> y(m * n);
    std::vector<float> row(k), col(k);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t p2 = 0; p2 < k; ++p2) row[p2] = float(a[i * k + p2]), col[p2] = float(b[p2 * n + j]);
        epilogue_inputs v;
        if (e.has_bias) v.bias = bias[j];
        y[i * n + j] = ops::common_gemm::epilogue_simulate(p.dt, e, dot_in_order(row, col, 0, k, order), v);
      }
    out[0].assign(y, p.dt.dst_round);
  };
}

TEST(matmul_variants, other_summation_orders_pass_at_every_seed) {
  for (sum_order o : {sum_order::reversed, sum_order::split_k, sum_order::pairwise, sum_order::blocked, sum_order::kahan})
    expect_passes_at_every_seed("order " + std::to_string(int(o)), variant(o),
                                {"matmul m=17 n=20 k=513 dt=f32:f32:f32", "matmul m=17 n=20 k=300 bias=1 act=gelu dt=bf16:f32:bf16",
                                 "matmul m=10 n=15 k=1000 alpha=0.5 bias=1 dt=f16:f32:f32 fill=positive"});
}

// How much of the f32 bound the other summation orders use, up to k = 16384 (the table of
// docs/NUMERICS.md, "Over seeds 1..8 and reduction lengths up to 16384", takes these lines).
TEST(matmul_variants, tightness_of_other_summation_orders) {
  const std::pair<sum_order, const char*> orders[] = {
      {sum_order::reversed, "reversed"}, {sum_order::split_k, "split-K"}, {sum_order::pairwise, "pairwise"}};
  for (const auto& [order, name] : orders) {
    function_backend b(name, variant(order));
    expect_tight_within_bound(std::string("variant:") + name, b, [](std::int64_t k) {
      return "matmul m=16 n=16 k=" + std::to_string(k) + " dt=f32:f32:f32";
    });
  }
}

}  // namespace
}  // namespace opval::test
