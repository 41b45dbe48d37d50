// Random numbers and fills: determinism (seed, stream, thread count, layout), distributions,
// and the promises each fill kind makes.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "opval/error.hpp"
#include "core/fill.hpp"
#include "core/rng.hpp"

namespace {

using opval::dtype;
using opval::fill_kind;
using opval::fill_params;
using opval::tensor;
using opval::random_bits;
using opval::random_normal;
using opval::random_normals;
using opval::random_uniform;
using opval::random_uniforms;

constexpr fill_kind all_kinds[] = {fill_kind::uniform, fill_kind::normal, fill_kind::positive,
                                   fill_kind::exact,   fill_kind::wide,   fill_kind::cancel,
                                   fill_kind::large,   fill_kind::special};
constexpr dtype some_types[] = {dtype::f32, dtype::tf32, dtype::bf16, dtype::f16, dtype::f8_e4m3,
                                dtype::f8_e5m2, dtype::f64, dtype::i8, dtype::u8, dtype::i32};

fill_params params(fill_kind k) {
  fill_params p;
  p.kind = k;
  return p;
}

tensor filled(dtype t, const opval::dims& shape, const fill_params& p, std::uint64_t seed,
              std::uint64_t stream = 0, const opval::layout& lay = {}) {
  tensor x(t, shape, lay);
  opval::fill_tensor(x, p, seed, stream);
  return x;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double stddev(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

TEST(rng, counter_based_and_uniform_range) {
  EXPECT_EQ(opval::random_bits(1, 2, 3), opval::random_bits(1, 2, 3));
  EXPECT_NE(opval::random_bits(1, 2, 3), opval::random_bits(1, 2, 4));
  EXPECT_NE(opval::random_bits(1, 2, 3), opval::random_bits(1, 3, 3));
  EXPECT_NE(opval::random_bits(1, 2, 3), opval::random_bits(2, 2, 3));
  // Swapping the counters must not give the same value (they are not combined symmetrically).
  EXPECT_NE(opval::random_bits(0, 1, 2), opval::random_bits(0, 2, 1));
  std::vector<double> u(100000);
  for (std::size_t i = 0; i < u.size(); ++i) {
    u[i] = opval::random_uniform(7, 0, i);
    ASSERT_GE(u[i], 0.0);
    ASSERT_LT(u[i], 1.0);
  }
  EXPECT_NEAR(mean(u), 0.5, 5 * std::sqrt(1.0 / 12 / u.size()));
  // Each bit of random_bits is set about half the time.
  for (int bit = 0; bit < 64; ++bit) {
    int ones = 0;
    for (std::uint64_t i = 0; i < 20000; ++i) ones += (opval::random_bits(3, 1, i) >> bit) & 1u;
    EXPECT_NEAR(ones, 10000, 5 * std::sqrt(5000.0)) << "bit " << bit;
  }
}

// The vectorised draws give the scalar functions' bits (no contracted multiply-add, the same
// expressions), and the polynomial log and cosine agree with libm's Box-Muller to 1e-11.
TEST(rng, vectorised_draws_equal_the_scalar_ones_and_the_normal_is_accurate) {
  std::vector<double> normals(10007), uniforms(10007);
  random_normals(5, 3, 1000, normals);
  random_uniforms(5, 3, 1000, uniforms);
  double worst = 0;
  for (std::size_t i = 0; i < normals.size(); ++i) {
    ASSERT_EQ(normals[i], random_normal(5, 3, 1000 + i)) << i;
    ASSERT_EQ(uniforms[i], random_uniform(5, 3, 1000 + i)) << i;
    const double u1 = static_cast<double>((random_bits(5, 3, 2 * (1000 + i)) >> 11) + 1) * 0x1.0p-53;
    const double u2 = random_uniform(5, 3, 2 * (1000 + i) + 1);
    const double libm = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    worst = std::max(worst, std::abs(normals[i] - libm));
  }
  EXPECT_LT(worst, 1e-11);
}

TEST(fill_determinism, same_seed_same_data_for_every_kind_and_type) {
  for (fill_kind k : all_kinds)
    for (dtype t : some_types) {
      const tensor a = filled(t, {37, 11}, params(k), 42, 1);
      const tensor b = filled(t, {37, 11}, params(k), 42, 1);
      EXPECT_TRUE(a.bitwise_equal(b)) << opval::to_string(k) << " " << opval::to_string(t);
    }
}

TEST(fill_determinism, seeds_and_streams_differ) {
  for (fill_kind k : all_kinds) {
    SCOPED_TRACE(std::string(opval::to_string(k)));
    const tensor a = filled(dtype::f32, {1000}, params(k), 1, 0);
    EXPECT_FALSE(a.bitwise_equal(filled(dtype::f32, {1000}, params(k), 2, 0)));
    EXPECT_FALSE(a.bitwise_equal(filled(dtype::f32, {1000}, params(k), 1, 1)));
  }
  // Streams are uncorrelated.
  const auto x = filled(dtype::f64, {100000}, params(fill_kind::normal), 5, 0).to_vector();
  const auto y = filled(dtype::f64, {100000}, params(fill_kind::normal), 5, 1).to_vector();
  double xy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) xy += x[i] * y[i];
  EXPECT_NEAR(xy / static_cast<double>(x.size()), 0.0, 5 / std::sqrt(100000.0));
}

TEST(fill_determinism, independent_of_thread_count) {
  const int saved = omp_get_max_threads();
  for (fill_kind k : all_kinds)
    for (dtype t : {dtype::f32, dtype::bf16, dtype::f8_e4m3, dtype::i8}) {
      // Large enough for the parallel path; contiguous (fast path) and padded (generic path).
      for (const opval::layout& lay : {opval::layout{}, opval::layout{opval::padded_strides({300, 120}, 125), 3}}) {
        omp_set_num_threads(1);
        const tensor one = filled(t, {300, 120}, params(k), 9, 2, lay);
        omp_set_num_threads(2);
        const tensor two = filled(t, {300, 120}, params(k), 9, 2, lay);
        EXPECT_TRUE(one.bitwise_equal(two)) << opval::to_string(k) << " " << opval::to_string(t);
      }
    }
  omp_set_num_threads(saved);
}

TEST(fill_determinism, values_depend_on_the_logical_index_not_the_layout) {
  for (fill_kind k : all_kinds) {
    const tensor dense = filled(dtype::bf16, {64, 96}, params(k), 3, 4);
    const tensor padded = filled(dtype::bf16, {64, 96}, params(k), 3, 4, {opval::padded_strides({64, 96}, 100), 7});
    const tensor column_major = filled(dtype::bf16, {64, 96}, params(k), 3, 4, {{1, 64}});
    EXPECT_TRUE(dense.bitwise_equal(padded)) << opval::to_string(k);
    EXPECT_TRUE(dense.bitwise_equal(column_major)) << opval::to_string(k);
  }
}

TEST(fill_determinism, overlapping_elements_get_the_last_index_whatever_the_threads) {
  // A broadcast layout: every row is the same memory.
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  tensor b(dtype::f32, {40000, 4}, {{0, 1}});
  opval::fill_tensor(b, params(fill_kind::normal), 11, 0);
  const auto ref = filled(dtype::f32, {40000, 4}, params(fill_kind::normal), 11, 0).to_vector();
  for (int j = 0; j < 4; ++j) EXPECT_EQ(b.at(j), ref[39999 * 4 + j]);
  omp_set_num_threads(saved);
}

TEST(fill_distribution, normal_mean_std_and_shape) {
  fill_params p = params(fill_kind::normal);
  p.scale = 2.5;
  const auto v = filled(dtype::f64, {200000}, p, 1).to_vector();
  const double n = static_cast<double>(v.size());
  EXPECT_NEAR(mean(v), 0.0, 5 * p.scale / std::sqrt(n));
  EXPECT_NEAR(stddev(v), p.scale, 5 * p.scale / std::sqrt(2 * n));
  // Within one and two sigma: 68.27 % and 95.45 %.
  const double in1 = std::count_if(v.begin(), v.end(), [&](double x) { return std::fabs(x) < p.scale; }) / n;
  const double in2 = std::count_if(v.begin(), v.end(), [&](double x) { return std::fabs(x) < 2 * p.scale; }) / n;
  EXPECT_NEAR(in1, 0.6827, 0.005);
  EXPECT_NEAR(in2, 0.9545, 0.003);
  // Quantized to bf16 the statistics hold too.
  const auto q = filled(dtype::bf16, {200000}, p, 1).to_vector();
  EXPECT_NEAR(stddev(q), p.scale, 0.02);
}

TEST(fill_distribution, uniform_and_large_stay_in_range) {
  fill_params p = params(fill_kind::uniform);
  p.lo = -3;
  p.hi = 5;
  const auto v = filled(dtype::f32, {100000}, p, 2).to_vector();
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -3.0);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 5.0);
  EXPECT_NEAR(mean(v), 1.0, 5 * 8 / std::sqrt(12.0 * 100000));
  fill_params l = params(fill_kind::large);
  l.scale = 80;
  const auto w = filled(dtype::f16, {10000}, l, 3).to_vector();
  for (double x : w) ASSERT_LE(std::fabs(x), 80.0);
  EXPECT_GT(*std::max_element(w.begin(), w.end()), 70.0);
}

TEST(fill_distribution, positive_is_strictly_positive_in_every_type) {
  for (dtype t : some_types)
    for (double scale : {1.0, 100.0, 1e-30}) {
      fill_params p = params(fill_kind::positive);
      p.scale = scale;
      const auto v = filled(t, {5000}, p, 4).to_vector();
      for (double x : v) ASSERT_GT(x, 0.0) << opval::to_string(t) << " scale " << scale;
    }
  fill_params p = params(fill_kind::positive);
  p.scale = 8;
  const auto v = filled(dtype::f32, {5000}, p, 4).to_vector();
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.5f);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 8.0);
}

TEST(fill_distribution, exact_gives_integers_in_range_with_the_density) {
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f8_e4m3, dtype::i8}) {
    fill_params p = params(fill_kind::exact);
    p.exact_range = 3;
    p.density = 0.25;
    const auto v = filled(t, {100000}, p, 5).to_vector();
    std::map<double, int> counts;
    for (double x : v) {
      ASSERT_EQ(x, std::round(x));
      ASSERT_LE(std::fabs(x), 3.0);
      ++counts[x];
    }
    EXPECT_EQ(counts.size(), 7u);  // every integer of [-3, 3] appears
    const double n = static_cast<double>(v.size());
    // A nonzero draw is 0 with probability 1/7.
    const double nonzero = (n - counts[0.0]) / n;
    EXPECT_NEAR(nonzero, 0.25 * 6 / 7, 0.01) << opval::to_string(t);
  }
}

TEST(fill_distribution, wide_spreads_binary_exponents_within_the_type) {
  fill_params p = params(fill_kind::wide);
  p.wide_exponents = 20;
  std::set<int> exponents;
  for (double x : filled(dtype::f32, {20000}, p, 6).to_vector()) exponents.insert(std::ilogb(x));
  EXPECT_EQ(*exponents.begin(), -10);
  EXPECT_EQ(*exponents.rbegin(), 9);
  EXPECT_EQ(exponents.size(), 20u);
  // In e4m3 (normal exponents -6 .. 8) exponents are clipped to the type: no subnormals or
  // zeros, and only draws of the top binade above 448 saturate (1/15 * 1/4 of them).
  const auto v = filled(dtype::f8_e4m3, {20000}, p, 6).to_vector();
  const auto saturated = std::count_if(v.begin(), v.end(), [](double x) { return std::fabs(x) == 448.0; });
  const auto tiny = std::count_if(v.begin(), v.end(), [](double x) { return std::fabs(x) < 0x1p-6; });
  EXPECT_LT(saturated, 20000 / 40);
  EXPECT_EQ(tiny, 0);
  const auto negatives = std::count_if(v.begin(), v.end(), [](double x) { return x < 0; });
  EXPECT_NEAR(negatives, 10000, 500);
}

TEST(fill_distribution, cancel_makes_nearly_opposite_pairs) {
  const auto v = filled(dtype::f64, {10000}, params(fill_kind::cancel), 7).to_vector();
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    ASSERT_LE(std::fabs(v[i] + v[i + 1]), std::fabs(v[i]) * 0x1p-10) << i;
    ASSERT_NE(v[i] + v[i + 1], 0.0) << i;  // not exact zeros in f64
  }
}

TEST(fill_distribution, special_contains_every_special_value) {
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f16, dtype::f8_e5m2, dtype::f8_e4m3}) {
    SCOPED_TRACE(std::string(opval::to_string(t)));
    fill_params p = params(fill_kind::special);
    p.special_rate = 0.05;
    const auto v = filled(t, {50000}, p, 8).to_vector();
    const double min_normal = opval::traits(t).min_normal;
    auto count = [&](auto pred) { return std::count_if(v.begin(), v.end(), pred); };
    const auto nans = count([](double x) { return std::isnan(x); });
    EXPECT_GT(nans, 0);
    if (opval::traits(t).has_inf) {
      EXPECT_GT(count([](double x) { return x == INFINITY; }), 0);
      EXPECT_GT(count([](double x) { return x == -INFINITY; }), 0);
    }
    EXPECT_GT(count([](double x) { return x == 0 && std::signbit(x); }), 0);
    EXPECT_GT(count([&](double x) { return x > 0 && x < min_normal; }), 0);
    EXPECT_GT(count([&](double x) { return x < 0 && x > -min_normal; }), 0);
    // About special_rate of the elements are special (NaN/inf/-0/subnormal); in fp8 normal
    // draws below min_normal blur the count.
    if (opval::traits(t).size_bytes == 1) continue;
    const auto specials = count([&](double x) { return !std::isfinite(x) || std::fabs(x) < min_normal; });
    EXPECT_NEAR(static_cast<double>(specials) / 50000, 0.05, 0.01);
  }
}

// The guarantee behind "a planted NaN bug is caught at every seed": however small the tensor
// (here 64 elements, where 1% sprinkling would usually give none), each special kind is there.
TEST(fill_distribution, special_puts_every_special_value_in_every_small_tensor) {
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f16})
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      SCOPED_TRACE(std::string(opval::to_string(t)) + " seed " + std::to_string(seed));
      const auto v = filled(t, {64}, params(fill_kind::special), seed).to_vector();
      const double min_normal = opval::traits(t).min_normal;
      auto has = [&](auto pred) { return std::any_of(v.begin(), v.end(), pred); };
      EXPECT_TRUE(has([](double x) { return std::isnan(x); }));
      EXPECT_TRUE(has([](double x) { return x == INFINITY; }));
      EXPECT_TRUE(has([](double x) { return x == -INFINITY; }));
      EXPECT_TRUE(has([](double x) { return x == 0 && std::signbit(x); }));
      EXPECT_TRUE(has([&](double x) { return x > 0 && x < min_normal; }));
      EXPECT_TRUE(has([&](double x) { return x < 0 && x > -min_normal; }));
    }
}

TEST(fill_representable, tf32_and_narrow_fills_hold_values_of_their_type) {
  // tf32 is stored as f32: the fill must round to 10 mantissa bits, not just to f32.
  for (fill_kind k : all_kinds) {
    const tensor t = filled(dtype::tf32, {5000}, params(k), 10);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      const std::uint32_t bits = t.data_as<std::uint32_t>()[i];
      if (!std::isnan(t.at(i))) {
        ASSERT_EQ(bits & 0x1fffu, 0u) << opval::to_string(k) << " " << t.at(i);
      }
    }
  }
  // Finite draws never overflow to infinity (fills saturate).
  fill_params big = params(fill_kind::uniform);
  big.lo = -1e6;
  big.hi = 1e6;
  for (dtype t : {dtype::f16, dtype::f8_e5m2, dtype::f8_e4m3})
    for (double x : filled(t, {1000}, big, 11).to_vector()) ASSERT_TRUE(std::isfinite(x));
}

TEST(fill_names, parse_and_print) {
  for (const auto& name : opval::generic_fill_names())
    EXPECT_EQ(opval::to_string(opval::parse_fill_kind(name)), name);
  EXPECT_EQ(opval::generic_fill_names().size(), std::size(all_kinds));
  EXPECT_THROW(opval::parse_fill_kind("gaussian"), opval::error);
}

}  // namespace
