// Error-model building blocks: the gamma constants and lambda, the choice among them, the
// output-rounding bound (checked against real rounding), and the empirical soundness of the
// probabilistic accumulation bound on float dot products.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "opval/contract.hpp"
#include "core/error_model.hpp"

namespace {

using opval::contract;
using opval::denormals;
using opval::dtype;
using opval::fill_traits;
using opval::rounding;

constexpr double inf = std::numeric_limits<double>::infinity();
const double u32 = std::ldexp(1.0, -24);

TEST(gamma, deterministic_constant) {
  EXPECT_DOUBLE_EQ(opval::gamma_deterministic(10, u32), 10 * u32 / (1 - 10 * u32));
  EXPECT_DOUBLE_EQ(opval::gamma_deterministic(1000, 1e-4), 0.1 / 0.9);
  EXPECT_EQ(opval::gamma_deterministic(0, u32), 0.0);
  EXPECT_EQ(opval::gamma_deterministic(1024, 1.0 / 1024), inf);  // n*u = 1
  EXPECT_EQ(opval::gamma_deterministic(4096, 1.0 / 1024), inf);
  EXPECT_TRUE(std::isfinite(opval::gamma_deterministic(1023, 1.0 / 1024)));
}

TEST(gamma, lambda_meets_the_false_alarm_rate) {
  for (double events : {1.0, 100.0, 1e6})
    for (double n : {1.0, 33.0, 4096.0})
      for (double p : {1e-6, 1e-9})
        for (double u : {u32, std::ldexp(1.0, -8)}) {
          const double lambda = opval::probabilistic_lambda(events, n, u, p);
          const double fail = 2 * events * n * std::exp(-lambda * lambda * (1 - u) * (1 - u) / 2);
          EXPECT_NEAR(fail / p, 1.0, 1e-9) << events << " " << n << " " << p << " " << u;
        }
  // More events or a smaller false-alarm rate need a larger lambda.
  EXPECT_GT(opval::probabilistic_lambda(1000, 64, u32, 1e-6), opval::probabilistic_lambda(10, 64, u32, 1e-6));
  EXPECT_GT(opval::probabilistic_lambda(10, 64, u32, 1e-9), opval::probabilistic_lambda(10, 64, u32, 1e-6));
}

TEST(gamma, probabilistic_is_smaller_than_deterministic_for_large_n) {
  const double n = 1e5, lambda = opval::probabilistic_lambda(1e6, n, u32, 1e-6);
  const double g = opval::gamma_probabilistic(n, u32, lambda);
  EXPECT_LT(g, opval::gamma_deterministic(n, u32) / 10);
  // First order lambda*sqrt(n)*u.
  EXPECT_NEAR(g / (lambda * std::sqrt(n) * u32), 1.0, 1e-3);
}

contract contract_of(const char* text) { return opval::parse_contract_types(text); }

TEST(accumulation_constant, probabilistic_by_default) {
  const contract c = contract_of("bf16:f32:bf16");
  const double n = 4096, outputs = 1e4;
  const auto g = opval::accumulation_constant(n, outputs, c, fill_traits{}, opval::bound_options{});
  EXPECT_TRUE(g.meaningful);
  const double lambda = opval::probabilistic_lambda(outputs, n, u32, 1e-6);
  EXPECT_DOUBLE_EQ(g.gamma, opval::gamma_probabilistic(n, u32, lambda));
  EXPECT_LT(g.gamma, opval::gamma_deterministic(n, u32));
  EXPECT_NE(g.formula.find("gamma_prob"), std::string::npos) << g.formula;
  // The false-alarm rate of the options enters lambda.
  const auto strict = opval::accumulation_constant(n, outputs, c, fill_traits{}, opval::bound_options{1e-12});
  EXPECT_GT(strict.gamma, g.gamma);
}

TEST(accumulation_constant, deterministic_for_same_sign_data_and_rz_accumulation) {
  const contract c = contract_of("bf16:f32:bf16");
  fill_traits same;
  same.same_sign = true;
  const auto g = opval::accumulation_constant(4096, 1e4, c, same, opval::bound_options{});
  EXPECT_DOUBLE_EQ(g.gamma, opval::gamma_deterministic(4096, u32));
  EXPECT_NE(g.formula.find("gamma_det"), std::string::npos) << g.formula;

  contract rz = c;
  ASSERT_TRUE(opval::apply_contract_option(rz, "acc_round", "rz"));
  const auto r = opval::accumulation_constant(4096, 1e4, rz, fill_traits{}, opval::bound_options{});
  EXPECT_DOUBLE_EQ(r.gamma, opval::gamma_deterministic(4096, 2 * u32));  // rz: u doubles
  EXPECT_NE(r.formula.find("gamma_det"), std::string::npos) << r.formula;

  // Short sums: the deterministic constant is the smaller one and is used.
  const auto s = opval::accumulation_constant(2, 1e4, c, fill_traits{}, opval::bound_options{});
  EXPECT_DOUBLE_EQ(s.gamma, opval::gamma_deterministic(2, u32));
}

TEST(accumulation_constant, not_meaningful_when_n_u_reaches_one_half) {
  const contract c = contract_of("f16:f16:f16");
  const auto g = opval::accumulation_constant(1024, 16, c, fill_traits{}, opval::bound_options{});
  EXPECT_FALSE(g.meaningful);
  EXPECT_NE(g.why_not.find("0.5"), std::string::npos) << g.why_not;
  EXPECT_NE(g.why_not.find("n*u_acc"), std::string::npos) << g.why_not;
  EXPECT_TRUE(opval::accumulation_constant(1023, 16, c, fill_traits{}, opval::bound_options{}).meaningful);
  // rz doubles u: half the length is already meaningless.
  contract rz = c;
  ASSERT_TRUE(opval::apply_contract_option(rz, "acc_round", "rz"));
  EXPECT_FALSE(opval::accumulation_constant(512, 16, rz, fill_traits{}, opval::bound_options{}).meaningful);
}

TEST(accumulation_constant, integer_accumulation_is_exact) {
  const auto g = opval::accumulation_constant(1 << 20, 1e4, contract_of("i8xi8:i32:f32"), fill_traits{},
                                              opval::bound_options{});
  EXPECT_TRUE(g.meaningful);
  EXPECT_EQ(g.gamma, 0.0);
}

TEST(unit_roundoff, values_and_rz) {
  EXPECT_EQ(opval::unit_roundoff(dtype::f32, rounding::rne), u32);
  EXPECT_EQ(opval::unit_roundoff(dtype::f32, rounding::rz), 2 * u32);
  EXPECT_EQ(opval::unit_roundoff(dtype::bf16, rounding::rne), std::ldexp(1.0, -8));
  EXPECT_EQ(opval::unit_roundoff(dtype::i32, rounding::rne), 0.0);
  EXPECT_EQ(opval::underflow_unit(dtype::f32, denormals::ieee), std::ldexp(1.0, -149));
  EXPECT_EQ(opval::underflow_unit(dtype::f32, denormals::ftz), std::ldexp(1.0, -126));
  // tf32 rounds inside the kernel an f32 input; an input already in bf16 needs no rounding.
  EXPECT_EQ(opval::input_rounding_error(contract_of("tf32"), dtype::f32), std::ldexp(1.0, -11));
  EXPECT_EQ(opval::input_rounding_error(contract_of("f32"), dtype::f32), 0.0);
}

// --- output_rounding_bound against real rounding ----------------------------------------

// Random values of every magnitude a type can hold: normal mantissas times 2^e with e from
// below the smallest subnormal to the top of the range.
std::vector<double> values_for(dtype t, std::mt19937_64& gen) {
  const auto& tr = opval::traits(t);
  const int lo = tr.min_exponent - tr.precision - 3;
  const int hi = static_cast<int>(std::log2(tr.max));
  std::uniform_int_distribution<int> exponent(lo, hi);
  std::normal_distribution<double> normal;
  std::vector<double> v;
  for (int i = 0; i < 20000; ++i) {
    const double x = i % 2 ? std::ldexp(normal(gen), exponent(gen)) : normal(gen);
    if (std::fabs(x) <= tr.max) v.push_back(x);
  }
  // Halfway cases and the edges of the subnormal range.
  for (double m : {0.5, 1.0, 1.5, 0.75}) {
    v.push_back(m * tr.min_subnormal);
    v.push_back(-m * tr.min_normal);
    v.push_back(1.0 + m * 2 * tr.unit_roundoff);
  }
  v.push_back(tr.max);
  return v;
}

TEST(output_rounding_bound, sound_for_every_float_type_rounding_and_denormal_mode) {
  std::mt19937_64 gen(42);
  for (dtype t : {dtype::f32, dtype::tf32, dtype::f16, dtype::bf16, dtype::f8_e4m3, dtype::f8_e5m2})
    for (rounding r : {rounding::rne, rounding::rz})
      for (denormals d : {denormals::ieee, denormals::ftz}) {
        contract c;
        c.dst = t, c.dst_round = r, c.denorm = d;
        const opval::contract_arith arith(c);  // the contract's own rounding, ftz flush included
        double worst = 0;
        for (double x : values_for(t, gen)) {
          const double y = arith.out(x);
          ASSERT_TRUE(std::isfinite(y)) << x;
          const double bound = opval::output_rounding_bound(t, r, d, x);
          ASSERT_LE(std::fabs(y - x), bound) << opval::to_string(t) << " r=" << int(r) << " d=" << int(d)
                                              << " x=" << x << " rounded " << y;
          if (bound > 0) worst = std::max(worst, std::fabs(y - x) / bound);
        }
        // Tight too: some value comes within a factor 2 of the bound.
        EXPECT_GT(worst, 0.5) << opval::to_string(t) << " r=" << int(r) << " d=" << int(d);
      }
}

TEST(output_rounding_bound, integers) {
  for (dtype t : {dtype::i8, dtype::u8, dtype::i32}) {
    EXPECT_EQ(opval::output_rounding_bound(t, rounding::rne, denormals::ieee, 3.7), 0.5);
    EXPECT_EQ(opval::output_rounding_bound(t, rounding::rz, denormals::ieee, 3.7), 1.0);
  }
  for (double x : {0.5, 1.5, 2.5, -2.5, 3.49, 100.99, -7.01}) {
    EXPECT_LE(std::fabs(opval::round_to(dtype::i32, x) - x), 0.5) << x;
    EXPECT_LE(std::fabs(opval::round_to(dtype::i32, x, rounding::rz) - x), 1.0) << x;
  }
}

// --- empirical soundness of the probabilistic accumulation bound ------------------------

// max over `count` float dot products of length n (fmaf, f32 accumulation) of
// |error| / (gamma * sum|a*b|), with the data drawn by `draw`.
template <class Draw>
double worst_dot_ratio(int count, int n, double gamma, Draw&& draw) {
  std::mt19937_64 gen(2024);
  std::vector<float> a(n), b(n);
  double worst = 0;
  for (int c = 0; c < count; ++c) {
    for (int i = 0; i < n; ++i) a[i] = static_cast<float>(draw(gen)), b[i] = static_cast<float>(draw(gen));
    float acc = 0;
    double exact = 0, abs_sum = 0;  // products of floats are exact in double; 1024 sums lose ~2^-43
    for (int i = 0; i < n; ++i) {
      acc = std::fmaf(a[i], b[i], acc);
      exact += static_cast<double>(a[i]) * b[i];
      abs_sum += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    worst = std::max(worst, std::fabs(acc - exact) / (gamma * abs_sum));
  }
  return worst;
}

TEST(accumulation_soundness, probabilistic_gamma_holds_for_float_dot_products) {
  const int count = 2000, n = 1024;
  const double lambda = opval::probabilistic_lambda(count, n, u32, 1e-6);
  const double gamma = opval::gamma_probabilistic(n, u32, lambda);
  // Zero-mean data: partial sums grow like sqrt(k), so errors sit far below sum|a*b|*gamma.
  std::normal_distribution<double> normal;
  const double centered = worst_dot_ratio(count, n, gamma, [&](auto& g) { return normal(g); });
  EXPECT_LE(centered, 1.0);
  EXPECT_GT(centered, 0.01);  // not vacuous (0.013 with this seed)
  // Data with a mean: partial sums grow like k, the case the bound is written for.
  std::normal_distribution<double> shifted(1.0, 1.0);
  const double drifting = worst_dot_ratio(count, n, gamma, [&](auto& g) { return shifted(g); });
  EXPECT_LE(drifting, 1.0);
  EXPECT_GT(drifting, 0.01);  // not vacuous
  std::printf("probabilistic gamma: worst error/bound %.3g (zero-mean), %.3g (mean 1)\n", centered, drifting);
}

TEST(accumulation_soundness, deterministic_gamma_holds_for_same_sign_data) {
  const int n = 1024;
  const double gamma = opval::gamma_deterministic(n, u32);
  std::uniform_real_distribution<double> positive(1.0 / 16, 1.0);
  const double worst = worst_dot_ratio(2000, n, gamma, [&](auto& g) { return positive(g); });
  EXPECT_LE(worst, 1.0);
  EXPECT_GT(worst, 1e-3);
  std::printf("deterministic gamma, same-sign data: worst error/bound %.3g\n", worst);
}

// --- the random-sign bound (Higham & Mary 2020's setting) -----------------------------------

// The f32 sums of the products t in four value-independent orders every kernel family uses.
enum class order { sequential_fma, pairwise, eight_accumulators, split_k_reversed };

float sum_in_order(const std::vector<float>& a, const std::vector<float>& b, order o) {
  const std::size_t n = a.size();
  switch (o) {
    case order::sequential_fma: {
      float acc = 0;
      for (std::size_t i = 0; i < n; ++i) acc = std::fmaf(a[i], b[i], acc);
      return acc;
    }
    case order::pairwise: {
      std::vector<float> level(n);
      for (std::size_t i = 0; i < n; ++i) level[i] = a[i] * b[i];
      while (level.size() > 1) {
        std::vector<float> next((level.size() + 1) / 2);
        for (std::size_t i = 0; i < next.size(); ++i)
          next[i] = 2 * i + 1 < level.size() ? level[2 * i] + level[2 * i + 1] : level[2 * i];
        level.swap(next);
      }
      return level.empty() ? 0.0f : level[0];
    }
    case order::eight_accumulators: {
      float acc[8] = {};
      for (std::size_t i = 0; i < n; ++i) acc[i % 8] = std::fmaf(a[i], b[i], acc[i % 8]);
      return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    }
    case order::split_k_reversed: {
      float parts[4] = {};
      const std::size_t chunk = (n + 3) / 4;
      for (std::size_t c = 0; c < 4; ++c)
        for (std::size_t i = std::min(n, (c + 1) * chunk); i-- > c * chunk;) parts[c] += a[i] * b[i];
      return (parts[3] + parts[2]) + (parts[1] + parts[0]);
    }
  }
  return 0;
}

// max over `count` sums of n products, in order o, of |error| / the random-sign bound at
// false-alarm rate p; `failures` counts the sums over it.
template <class Draw>
double worst_random_sign_ratio(int count, int n, order o, double p, Draw&& draw, int* failures = nullptr) {
  opval::accumulation_gamma g;
  g.gamma = inf;
  opval::random_sign_constants(n, count, u32, p, 1, g);
  std::mt19937_64 gen(2026 + n);
  std::vector<float> a(n), b(n);
  double worst = 0;
  for (int c = 0; c < count; ++c) {
    double exact = 0, abs_sum = 0, square_sum = 0;
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<float>(draw(gen)), b[i] = static_cast<float>(draw(gen));
      const double t = static_cast<double>(a[i]) * b[i];
      exact += t, abs_sum += std::fabs(t), square_sum += t * t;
    }
    const double ratio = std::fabs(sum_in_order(a, b, o) - exact) / g.sum_error(abs_sum, square_sum);
    worst = std::max(worst, ratio);
    if (failures && ratio > 1) ++*failures;
  }
  return worst;
}

TEST(random_sign_bound, holds_for_every_order_on_zero_mean_data_and_is_tight) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int n : {256, 4096}) {
    const int count = 4096 * 64 / n;
    for (order o : {order::sequential_fma, order::pairwise, order::eight_accumulators, order::split_k_reversed}) {
      const double worst_normal = worst_random_sign_ratio(count, n, o, 1e-6, [&](auto& g) { return normal(g); });
      const double worst_uniform = worst_random_sign_ratio(count, n, o, 1e-6, [&](auto& g) { return uniform(g); });
      EXPECT_LE(worst_normal, 1.0) << n << " order " << int(o);
      EXPECT_LE(worst_uniform, 1.0) << n << " order " << int(o);
      std::printf("random-sign bound, n=%d order %d: worst error/bound %.3g (normal), %.3g (uniform)\n", n,
                  int(o), worst_normal, worst_uniform);
    }
    // Not vacuous: the sequential sum, the loosest order, uses over 1% of the bound (the classic
    // gamma*sum|t| bound: 0.3% at n = 4096).
    EXPECT_GT(worst_random_sign_ratio(count, n, order::sequential_fma, 1e-6, [&](auto& g) { return normal(g); }),
              0.01)
        << n;
  }
}

TEST(random_sign_bound, its_false_alarm_rate_stays_within_the_stated_probability) {
  // At a false-alarm rate of 1/2 the bound is as tight as the policy allows; far fewer than
  // half the sums of a correct kernel may exceed it.
  std::normal_distribution<double> normal;
  int failures = 0;
  const int count = 2000;
  const double worst =
      worst_random_sign_ratio(count, 1024, order::sequential_fma, 0.5, [&](auto& g) { return normal(g); }, &failures);
  EXPECT_LE(failures, count / 2);
  EXPECT_EQ(failures, 0) << "worst " << worst;
}

TEST(random_sign_bound, does_not_hold_for_data_with_a_mean_which_is_why_it_is_not_used_there) {
  // Partial sums of drifting data grow like k, not sqrt(k): the random-sign assumption is
  // what makes the bound sound, and a fill that breaks it must not use it.
  std::normal_distribution<double> shifted(1.0, 0.1);
  const double worst = worst_random_sign_ratio(32, 16384, order::sequential_fma, 1e-6, [&](auto& g) { return shifted(g); });
  EXPECT_GT(worst, 1.0);
  // The sharper bound is at most the classic one and far below it at large n.
  opval::accumulation_gamma g;
  g.gamma = 1e-3;
  opval::random_sign_constants(4096, 1, u32, 1e-6, 1, g);
  EXPECT_LE(g.sum_error(4096, 4096), g.gamma * 4096);
  EXPECT_LT(g.sum_error(4096 * 0.8, 4096), g.gamma * 4096 * 0.8);
  EXPECT_EQ(g.sum_error(10, 100), std::min(g.gamma * 10, g.root * 10 + g.linear * 10));
}

}  // namespace
