// softmax and log_softmax: hand-computed values, special-value semantics, metamorphic
// properties, the bound against the sim backend, and the tester tested with planted bugs and
// legitimate variant kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "opval/error.hpp"
#include "core/rng.hpp"
#include "ops/common_softmax/softmax_family.hpp"
#include "ops/op_testing.hpp"

namespace opval {
namespace {

using namespace opval::testing;

// Reference and sim of one row given explicitly (f32 contract).
struct row_result {
  std::vector<double> ref, sim;
};
row_result run_row(const std::string& op, const std::vector<double>& x) {
  const direct_case c = run_on_values(parse_problem(op + " shape=" + std::to_string(x.size()) + " dt=f32"), x);
  return {c.ref[0].to_vector(), c.out[0].to_vector()};
}

TEST(softmax, hand_computed) {
  const double e = std::exp(1.0);
  row_result r = run_row("softmax", {0.0, 1.0});
  EXPECT_NEAR(r.ref[0], 1 / (1 + e), 1e-15);
  EXPECT_NEAR(r.ref[1], e / (1 + e), 1e-15);
  EXPECT_NEAR(r.sim[1], e / (1 + e), 1e-7);
  r = run_row("softmax", {3.0, 3.0, 3.0, 3.0});
  for (double v : r.ref) EXPECT_EQ(v, 0.25);
  for (double v : r.sim) EXPECT_EQ(v, 0.25);
  r = run_row("log_softmax", {5.0, 5.0});
  EXPECT_NEAR(r.ref[0], -std::log(2.0), 1e-15);
  r = run_row("log_softmax", {0.0, 1.0, 2.0});
  EXPECT_NEAR(r.ref[2], -std::log(1 + 1 / e + 1 / (e * e)), 1e-15);
}

TEST(softmax, axis_selects_the_normalized_dimension) {
  // shape 2x3, axis 0: columns sum to one; axis 1: rows do.
  for (int axis : {0, 1, -1, -2}) {
    problem p = parse_problem("softmax shape=2x3 axis=" + std::to_string(axis) + " dt=f32");
    direct_case c = run_direct(p, 7);
    const double* y = c.ref[0].data_as<double>();
    const bool over_rows = axis == 0 || axis == -2;
    for (int k = 0; k < (over_rows ? 3 : 2); ++k) {
      double s = 0;
      for (int j = 0; j < (over_rows ? 2 : 3); ++j) s += over_rows ? y[j * 3 + k] : y[k * 3 + j];
      EXPECT_NEAR(s, 1.0, 1e-14) << "axis " << axis;
    }
  }
}

TEST(softmax, nan_or_positive_infinity_make_the_row_nan) {
  for (const char* op : {"softmax", "log_softmax"}) {
    for (double bad : {nan_v, inf}) {
      row_result r = run_row(op, {1.0, bad, 2.0});
      for (double v : r.ref) EXPECT_TRUE(std::isnan(v)) << op;
      for (double v : r.sim) EXPECT_TRUE(std::isnan(v)) << op;
    }
    row_result r = run_row(op, {-inf, -inf});  // no probability mass: 0/0
    for (double v : r.ref) EXPECT_TRUE(std::isnan(v)) << op;
    for (double v : r.sim) EXPECT_TRUE(std::isnan(v)) << op;
  }
}

TEST(softmax, negative_infinity_gets_exactly_zero_probability) {
  row_result r = run_row("softmax", {0.0, -inf, 0.0});
  EXPECT_EQ(r.ref[1], 0.0);
  EXPECT_EQ(r.sim[1], 0.0);
  EXPECT_EQ(r.ref[0], 0.5);
  EXPECT_EQ(r.sim[0], 0.5);
  r = run_row("log_softmax", {0.0, -inf, 0.0});
  EXPECT_EQ(r.ref[1], -inf);
  EXPECT_EQ(r.sim[1], -inf);
}

TEST(softmax, invariant_to_a_constant_added_per_row) {
  // Multiples of 2^-8 in about [-8, 8]: adding an integer per row stays exact in f32.
  const std::int64_t rows = 6, n = 37;
  std::vector<double> x(rows * n), shifted(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = std::round(2.0 * random_normal(5, 0, i) * 256.0) / 256.0;
    shifted[i] = x[i] + static_cast<double>(i / n) * 3.0 - 7.0;
  }
  for (const char* op : {"softmax", "log_softmax"}) {
    problem p = parse_problem(std::string(op) + " shape=6x37 dt=f32:f32:bf16");
    std::vector<tensor> a_in{tensor(dtype::f32, {rows, n})}, b_in{tensor(dtype::f32, {rows, n})};
    a_in[0].assign(x);
    b_in[0].assign(shifted);
    ASSERT_EQ(b_in[0].to_vector(), shifted);
    direct_case a = run_direct(p, 3, a_in), b = run_direct(p, 3, b_in);
    const double* ra = a.ref[0].data_as<double>();
    const double* rb = b.ref[0].data_as<double>();
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(ra[i], rb[i], 1e-13 * (1.0 + std::fabs(ra[i]))) << op;
    EXPECT_LE(worst_ratio(a), 1.0) << op;
    EXPECT_LE(worst_ratio(b), 1.0) << op;
  }
}

TEST(softmax, large_fill_overflows_without_max_subtraction) {
  direct_case c = run_direct(parse_problem("softmax shape=4x64 dt=f32 fill=large"), 1);
  std::vector<double> x = c.in[0].to_vector();
  EXPECT_GT(*std::max_element(x.begin(), x.end()), std::log(std::numeric_limits<float>::max()));
}

// All problems of both ops' suites: sim within the bound, and the bound not vacuous.
TEST(softmax, sim_within_bound_on_every_suite_problem) {
  for (const char* op : {"softmax", "log_softmax"}) {
    const double tightest = expect_within_bound_on_suites(op);
    std::printf("%s: max observed error / bound over the suites = %.3g\n", op, tightest);
    EXPECT_GT(tightest, 0.1) << op << ": the bound is loose everywhere";
  }
}

TEST(softmax, validate_names_the_attribute) {
  EXPECT_THROW(find_op("softmax").validate(parse_problem("softmax shape=4x5 axis=2")), error);
  EXPECT_THROW(find_op("softmax").validate(parse_problem("softmax shape=4x5 axis=-3")), error);
  EXPECT_THROW(find_op("softmax").validate(parse_problem("softmax shape=4x5 dt=f32@tf32:f32:f32")), error);
  EXPECT_THROW(find_op("log_softmax").validate(parse_problem("log_softmax shape=4x5 dt=u8xi8:i32:f32")), error);
  for (const auto& dt : find_op("softmax").contracts())
    EXPECT_NO_THROW(find_op("softmax").validate(parse_problem("softmax shape=3x3 dt=" + dt))) << dt;
}

// --- end to end through the runner --------------------------------------------------------

TEST(softmax, every_suite_problem_passes_under_sim) {
  for (const char* tag : {"smoke", "regression"}) expect_suite_passes_under_sim(tag, {"softmax", "log_softmax"});
}

// A kernel over the rows of a softmax-family problem in T (float, or double for the f64
// contracts); `row` works in place.
template <class T = float>
using row_kernel_of = std::function<void(std::vector<T>& row, bool log)>;
using row_kernel = row_kernel_of<float>;
template <class T = float>
kernel_fn rows_with(row_kernel_of<T> row) {
  return [row](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const auto g = ops::softmax::geometry_of(p.get_dims("shape"), p.get_int("axis"));
    const bool log = p.op() == "log_softmax";
    std::vector<double> x = in[0].to_vector(), y(x.size());
    std::vector<T> r(g.len);
    for (std::int64_t i = 0; i < g.rows(); ++i) {
      for (std::int64_t j = 0; j < g.len; ++j) r[j] = static_cast<T>(x[g.index(i, j)]);
      row(r, log);
      for (std::int64_t j = 0; j < g.len; ++j) y[g.index(i, j)] = r[j];
    }
    out[0].assign(y);
  };
}

template <class T>
T row_max(const std::vector<T>& r) {
  T m = -std::numeric_limits<T>::infinity();
  for (T v : r) m = (v > m || std::isnan(v)) && !std::isnan(m) ? v : m;
  return m;
}

// Writes softmax or log_softmax given the max used and the computed sum.
template <class T>
void finish(std::vector<T>& r, bool log, T m, T s, bool reciprocal) {
  const T ls = std::log(s), inv = T(1) / s;
  for (T& v : r) {
    const T t = v - m;
    v = log ? t - ls : reciprocal ? std::exp(t) * inv : std::exp(t) / s;
  }
}

// Legitimate: reversed summation, multiplication by the reciprocal.
template <class T>
void reversed_sum(std::vector<T>& r, bool log) {
  const T m = row_max(r);
  T s = 0;
  for (auto it = r.rbegin(); it != r.rend(); ++it) s += std::exp(*it - m);
  finish(r, log, m, s, true);
}

// Legitimate: pairwise summation.
float pairwise(const float* e, std::size_t n) {
  if (n <= 2) return n == 0 ? 0.0f : n == 1 ? e[0] : e[0] + e[1];
  return pairwise(e, n / 2) + pairwise(e + n / 2, n - n / 2);
}
void pairwise_sum(std::vector<float>& r, bool log) {
  const float m = row_max(r);
  std::vector<float> e(r.size());
  for (std::size_t j = 0; j < r.size(); ++j) e[j] = std::exp(r[j] - m);
  finish(r, log, m, pairwise(e.data(), e.size()), false);
}

// Legitimate: online normalizer over blocks of 16 (running max, sum rescaled by exp(m - m')).
template <class T>
void online_sum(std::vector<T>& r, bool log) {
  T m = -std::numeric_limits<T>::infinity(), s = 0;
  for (std::size_t b = 0; b < r.size(); b += 16) {
    std::vector<T> blk(r.begin() + b, r.begin() + std::min(r.size(), b + 16));
    const T mb = std::max(m, row_max(blk));
    if (std::isnan(row_max(blk))) m = row_max(blk);
    if (std::isnan(m)) break;
    if (mb == -std::numeric_limits<T>::infinity()) continue;
    s *= std::exp(m - mb);
    for (T v : blk) s += std::exp(v - mb);
    m = mb;
  }
  if (std::isnan(m) || m == -std::numeric_limits<T>::infinity()) {
    std::fill(r.begin(), r.end(), std::numeric_limits<T>::quiet_NaN());
    return;
  }
  finish(r, log, m, s, false);
}

// Bug: no max subtraction (exp overflows on large logits).
void no_max_subtraction(std::vector<float>& r, bool log) { finish(r, log, 0.0f, [&] {
  float s = 0;
  for (float v : r) s += std::exp(v);
  return s;
}(), false); }

TEST(softmax, legitimate_variants_pass) {
  const std::vector<std::pair<std::string, row_kernel>> kernels = {
      {"reversed_sum", reversed_sum<float>}, {"pairwise_sum", pairwise_sum}, {"online_sum_16", online_sum<float>}};
  for (const auto& [name, k] : kernels) {
    function_backend b(name, rows_with(k));
    for (const char* op : {"softmax", "log_softmax"})
      for (const char* fill : {"normal", "large", "special", "constant_rows", "uniform"})
        for (const char* shape : {"3x1000", "7x33", "2x5x3 axis=1"}) {
          std::string line = std::string(op) + " shape=" + shape + " dt=f32 fill=" + fill;
          case_result r = run_with(line, b);
          EXPECT_EQ(r.v.st, state::passed) << name << ": " << line << ": " << r.v.reason;
          line = std::string(op) + " shape=" + shape + " dt=bf16:f32:bf16 fill=" + fill;
          r = run_with(line, b);
          EXPECT_EQ(r.v.st, state::passed) << name << ": " << line << ": " << r.v.reason;
        }
  }
}

TEST(softmax, online_kernel_passes_the_whole_regression_suite) {
  // In float, or in double for the f64 contracts.
  function_backend b("online_sum_16", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    (p.dt.acc == dtype::f64 ? rows_with<double>(online_sum<double>) : rows_with<float>(online_sum<float>))(p, in, out);
  });
  for (const auto& lp : suite_problems("regression", {"softmax", "log_softmax"})) {
    case_result r = run_case(lp.prob, b, run_options{});
    EXPECT_EQ(r.v.st, state::passed) << r.descriptor << ": " << r.v.reason;
  }
}

TEST(softmax, planted_bugs_fail) {
  // At every seed (the fill feature's planted bug).
  function_backend no_max("no_max_subtraction", rows_with<float>(no_max_subtraction));
  expect_at_every_seed(no_max, {"softmax shape=4x64 dt=f32 fill=large", "softmax shape=3x129 dt=bf16:f32:bf16 fill=large"},
                       state::failed);
  case_result r;
  // log(sum exp x) = inf makes every output -inf: rejected as a constant output.
  r = run_with("log_softmax shape=4x64 dt=f32 fill=large", no_max);
  EXPECT_EQ(r.v.st, state::mistrusted) << "log_softmax without max subtraction: " << r.v.reason;
  function_backend zeros("all_zero", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    std::vector<double> z(out[0].numel(), 0.0);
    out[0].assign(z);
  });
  r = run_with("softmax shape=4x64 dt=f32", zeros);
  EXPECT_EQ(r.v.st, state::mistrusted) << r.v.reason;
  // log_softmax as x - (max + log s): loses u*|max| on large logits (pytorch#11752).
  function_backend merged("merged_offset", rows_with<float>([](std::vector<float>& v, bool log) {
    const float m = row_max(v);
    float s = 0;
    for (float x : v) s += std::exp(x - m);
    const float off = m + std::log(s);
    for (float& x : v) x = log ? x - off : std::exp(x - m) / s;
  }));
  r = run_with("log_softmax shape=8x8 dt=f32 fill=large", merged);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
  // Its error is one offset per row: the row-shape test passes and the reason says so.
  ASSERT_EQ(r.v.outputs[0].checks.size(), 1u);
  EXPECT_EQ(r.v.outputs[0].checks[0].st, state::passed) << r.v.outputs[0].checks[0].reason;
  EXPECT_NE(r.v.reason.find("right up to an offset common to each row"), std::string::npos) << r.v.reason;
  // Truncated output (round toward zero where rne is promised): the bias test catches it.
  function_backend truncating("truncating", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    std::vector<double> y = out[0].to_vector();
    problem pf = p;
    pf.dt.dst = dtype::f32;
    std::vector<tensor> exact{tensor(dtype::f32, out[0].shape())};
    p.spec().simulate(pf, in, exact);
    std::vector<double> e = exact[0].to_vector();
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = round_to(p.dt.dst, e[i], rounding::rz);
    out[0].assign(y);
  });
  r = run_with("softmax shape=64x256 dt=f32:f32:bf16 fill=uniform", truncating);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
}

// --- float64 outputs -------------------------------------------------------------------------

const std::vector<std::string> f64_lines{
    "shape=7x129 dt=f32:f64:f64 fill=normal", "shape=3x1000 dt=bf16:f64:f64 fill=uniform",
    "shape=2x5x33 axis=1 dt=f16:f64:f64 fill=large", "shape=4x64 dt=f32:f64:f64 fill=special"};

// Every line on both ops at seeds 1..8 through `k`: each case must end in `want`.
void expect_f64_at_every_seed(const std::string& name, const kernel_fn& k, state want) {
  function_backend b(name, k);
  for (const char* op : {"softmax", "log_softmax"})
    for (const auto& rest : f64_lines)
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const std::string line = std::string(op) + " " + rest;
        const case_result r = run_with(line, b, seed);
        EXPECT_EQ(r.v.st, want) << name << " seed " << seed << ": " << line << ": " << r.v.reason;
      }
}

TEST(softmax, f64_output_legitimate_variants_pass_at_every_seed) {
  // Online normalization and reversed summation in double: other orders, the same contract.
  expect_f64_at_every_seed("online_sum_16_f64", rows_with<double>(online_sum<double>), state::passed);
  expect_f64_at_every_seed("reversed_sum_f64", rows_with<double>(reversed_sum<double>), state::passed);
}

TEST(softmax, f64_output_computed_in_f32_fails_at_every_seed) {
  // The bug: the f64 output holds an f32 computation (what dtype=torch.float64 must not do).
  function_backend b("f32_inside", rows_with<float>(online_sum<float>));
  for (const char* op : {"softmax", "log_softmax"})
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const std::string line = std::string(op) + " shape=7x129 dt=f32:f64:f64 fill=normal";
      const case_result r = run_with(line, b, seed);
      EXPECT_EQ(r.v.st, state::failed) << "seed " << seed << ": " << line << ": " << r.v.reason;
    }
}

TEST(softmax, online_kernel_passes_at_every_seed) {
  // The online normalizer (blocks of 16, rescaled sums) in f32 at seeds 1..8: a legitimate
  // order must not fail on an unlucky draw.
  function_backend b("online_sum_16", rows_with<float>(online_sum<float>));
  for (const char* op : {"softmax", "log_softmax"})
    for (const char* rest : {"shape=7x129 dt=f32 fill=normal", "shape=3x1000 dt=bf16:f32:bf16 fill=large",
                             "shape=5x33 dt=f16:f32:f16 fill=special"})
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const std::string line = std::string(op) + " " + rest;
        const case_result r = run_with(line, b, seed);
        EXPECT_EQ(r.v.st, state::passed) << "seed " << seed << ": " << line << ": " << r.v.reason;
      }
}

// --- one planted bug per feature of the generated suites' table, caught at seeds 1..8 --------

TEST(softmax, wrong_axis_fails_at_every_seed) {
  // Square problems: normalizing the other axis gives the same output shape.
  expect_fails_at_every_seed("other_axis", simulating_as([](problem& q) { q.set("axis", std::int64_t{q.get_int("axis") == 0 ? 1 : 0}); }),
                             {"softmax shape=16x16 axis=0 dt=f32", "log_softmax shape=16x16 axis=1 dt=bf16:f32:bf16",
                              "softmax shape=31x31 axis=1 dt=f16:f32:f16 fill=large"});
}

TEST(softmax, flushing_subnormals_fails_at_every_seed) {
  // denorm=ftz where the contract keeps subnormals: the large fill's logit gaps beyond 87 give
  // probabilities in f32's subnormal range, which a flushing kernel returns as 0.
  expect_fails_at_every_seed("flushing", simulating_as([](problem& q) { q.dt.denorm = denormals::ftz; }),
                             {"softmax shape=3x129 axis=-1 dt=f32 fill=large", "softmax shape=2x1000 axis=1 dt=f32 fill=large"});
}

// Not a planted bug here: acc_round=rz where rne was promised. Each rz step loses on average the
// half ulp that is rne's worst case, so the error stays within the a-priori bound (about half
// of it on 4099 terms), and the bias test takes only elements whose compute bound is under a
// quarter ulp, which an accumulated sum is not: opval cannot tell it from an rne kernel.

TEST(softmax, rounding_to_nearest_under_an_rz_contract_passes_at_every_seed) {
  // The reverse is legitimate: acc_round=rz bounds each step by a whole ulp, round-to-nearest
  // stays within it.
  expect_passes_at_every_seed("acc_rne", simulating_as([](problem& q) { q.dt.acc_round = rounding::rne; }),
                              {"softmax shape=3x129 axis=-1 dt=f32 acc_round=rz", "log_softmax shape=16x1000 axis=-1 dt=bf16:f32:bf16 acc_round=rz"});
}

// --- the row-shape test (each row normalized by its own sum) --------------------------------

// Legitimate: softmax as exp(log_softmax), p = exp(x - m - log s): the argument's extra
// rounding is per term, log s's error common to the row.
template <class T>
void exp_of_log_softmax(std::vector<T>& r, bool log) {
  const T m = row_max(r);
  T s = 0;
  for (T v : r) s += std::exp(v - m);
  const T ls = std::log(s);
  for (T& v : r) v = log ? (v - m) - ls : std::exp((v - m) - ls);
}

// Legitimate: the denominator summed in double, more accurate than the contract asks.
void f64_sum(std::vector<float>& r, bool log) {
  const float m = row_max(r);
  double s = 0;
  for (float v : r) s += std::exp(v - m);
  finish(r, log, m, static_cast<float>(s), false);
}

// Legitimate: one pass over blocks of 16 writing exp(x - running max), each term rescaled
// once at the end by exp(m_block - m) and multiplied by the reciprocal of the rescaled sum.
void one_pass_rescaled(std::vector<float>& r, bool log) {
  float m = -std::numeric_limits<float>::infinity(), s = 0;
  std::vector<float> block_max;
  for (std::size_t b = 0; b < r.size(); b += 16) {
    const std::size_t end = std::min(r.size(), b + 16);
    const float mb = std::max(m, *std::max_element(r.begin() + b, r.begin() + end));
    s *= std::exp(m - mb);
    for (std::size_t j = b; j < end; ++j) s += r[j] = std::exp(r[j] - mb);
    block_max.push_back(m = mb);
  }
  const float inv = 1.0f / s;
  for (std::size_t j = 0; j < r.size(); ++j) {
    const float p = r[j] * std::exp(block_max[j / 16] - m) * inv;
    r[j] = log ? std::log(p) : p;
  }
}

// A bug: exp accurate to about 2^-15 (a fast table-based exp without its refinement step):
// a few hundred f32 ulps, within the element-wise bound of a long row (n u), far beyond the
// row-shape test's per-term allowance.
template <class T>
T coarse_exp(T t) {
  const double e = std::exp(static_cast<double>(t));
  const std::uint64_t h = std::hash<double>{}(static_cast<double>(t));
  return static_cast<T>(e * (1.0 + std::ldexp((h & 1) ? 1.0 : -1.0, -15)));
}
template <class T>
void coarse_exp_kernel(std::vector<T>& r, bool log) {
  const T m = row_max(r);
  std::vector<T> e(r.size());
  T s = 0;
  for (std::size_t j = 0; j < r.size(); ++j) s += e[j] = coarse_exp<T>(r[j] - m);
  for (std::size_t j = 0; j < r.size(); ++j) r[j] = log ? std::log(e[j] / s) : e[j] / s;
}

// Legitimate, at the edge of ulps.exp = 2: every exp 2 ulps off, up or down by the argument's
// hash (the row-shape test's per-term allowance is used, not exceeded).
float exp_2_ulps_off(float t) {
  const float e = std::exp(t), towards = (std::hash<float>{}(t) & 1) ? INFINITY : 0.0f;
  return std::nextafter(std::nextafter(e, towards), towards);
}
void edge_exp_kernel(std::vector<float>& r, bool log) {
  const float m = row_max(r);
  std::vector<float> e(r.size());
  float s = 0;
  for (std::size_t j = 0; j < r.size(); ++j) s += e[j] = std::isinf(r[j]) ? 0.0f : exp_2_ulps_off(r[j] - m);
  for (std::size_t j = 0; j < r.size(); ++j) r[j] = log ? std::log(e[j] / s) : e[j] / s;
}

// Rows up to 16384 long in f32 and with bf16 inputs, at seeds 1..8.
std::vector<std::string> long_rows(const char* op) {
  std::vector<std::string> lines;
  for (const char* n : {"64", "1024", "4096", "16384"})
    for (const char* dt : {"f32", "bf16:f32:f32"}) lines.push_back(std::string(op) + " shape=4x" + n + " dt=" + dt);
  return lines;
}

// The largest |error| / bound of the row-shape test over `lines` at seeds 1..8 through `b`,
// each case expected to pass.
double row_shape_tightness(backend& b, const std::vector<std::string>& lines) {
  double worst = 0;
  for (const auto& line : lines)
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
      const case_result r = run_with(line, b, seed);
      EXPECT_EQ(r.v.st, state::passed) << b.name() << " seed " << seed << ": " << line << ": " << r.v.reason;
      if (r.v.outputs.size() != 1 || r.v.outputs[0].checks.size() != 1) {
        ADD_FAILURE() << line << ": no row-shape test";
        continue;
      }
      worst = std::max(worst, r.v.outputs[0].checks[0].m.max_error_over_bound);
    }
  return worst;
}

TEST(softmax, row_shape_test_is_tight_and_every_legitimate_kernel_passes_it) {
  const std::unique_ptr<backend> sim = make_sim_backend();
  for (const char* op : {"softmax", "log_softmax"}) {
    const double tight = row_shape_tightness(*sim, long_rows(op));
    std::printf("%s: row-shape test, sim's worst |error| / bound over n = 64..16384, seeds 1..8: %.3g\n", op, tight);
    EXPECT_GT(tight, 0.05) << op << ": the row-shape bound is loose";  // the element-wise one: 0.003 at 16384
  }
  const std::vector<std::pair<std::string, row_kernel>> kernels = {
      {"reversed_sum", reversed_sum<float>}, {"pairwise_sum", pairwise_sum}, {"online_sum_16", online_sum<float>},
      {"exp_of_log_softmax", exp_of_log_softmax<float>}, {"f64_sum", f64_sum}, {"one_pass_rescaled", one_pass_rescaled},
      {"exp_2_ulps_off", edge_exp_kernel}};
  for (const auto& [name, k] : kernels) {
    function_backend b(name, rows_with(k));
    for (const char* op : {"softmax", "log_softmax"})
      std::printf("%s, %s: row-shape test's worst |error| / bound: %.3g\n", name.c_str(), op,
                  row_shape_tightness(b, long_rows(op)));
  }
}

TEST(softmax, a_coarse_exp_fails_only_the_row_shape_test_at_every_seed) {
  function_backend b("coarse_exp", rows_with<float>(coarse_exp_kernel<float>));
  for (const char* op : {"softmax", "log_softmax"})
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
      const std::string line = std::string(op) + " shape=4x4096 dt=f32";
      const case_result r = run_with(line, b, seed);
      ASSERT_EQ(r.v.outputs.size(), 1u);
      const output_verdict& o = r.v.outputs[0];
      EXPECT_EQ(r.v.st, state::failed) << "seed " << seed << ": " << line << ": " << r.v.reason;
      EXPECT_EQ(o.m.beyond_bound, 0) << line << ": the element-wise test was expected to let it through";
      EXPECT_NE(r.v.reason.find("row shape test"), std::string::npos) << r.v.reason;
      EXPECT_NE(r.v.reason.find("distorted"), std::string::npos) << r.v.reason;
    }
}

TEST(softmax, a_wrong_denominator_is_explained_as_common_to_the_row) {
  // The sum accumulated in bf16: every probability off by one factor per row.
  function_backend b("bf16_sum", rows_with<float>([](std::vector<float>& r, bool log) {
    const float m = row_max(r);
    float s = 0;
    for (float v : r) s = round_to(dtype::bf16, s + std::exp(v - m), rounding::rne);
    finish(r, log, m, s, false);
  }));
  for (const char* op : {"softmax", "log_softmax"}) {
    const case_result r = run_with(std::string(op) + " shape=4x1024 dt=f32", b);
    EXPECT_EQ(r.v.st, state::failed) << op;
    ASSERT_EQ(r.v.outputs.size(), 1u);
    EXPECT_GT(r.v.outputs[0].m.beyond_bound, 0) << op;
    ASSERT_EQ(r.v.outputs[0].checks.size(), 1u);
    EXPECT_EQ(r.v.outputs[0].checks[0].st, state::passed) << op << ": " << r.v.outputs[0].checks[0].reason;
    EXPECT_NE(r.v.reason.find("common to each row"), std::string::npos) << r.v.reason;
  }
}

TEST(softmax, f64_contracts_validate) {
  EXPECT_EQ(validation_error("softmax dt=f32:f64:f64"), "");
  EXPECT_NE(validation_error("softmax dt=f32:f64:f32").find("does not support contract"), std::string::npos);
  EXPECT_NE(validation_error("log_softmax dt=f64:f64:f64").find("does not support contract"), std::string::npos);
}

}  // namespace
}  // namespace opval
