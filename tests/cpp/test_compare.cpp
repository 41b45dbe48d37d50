// compare_outputs: every metric on hand-made tensors, the NaN / Inf / -0 classes, the
// rounding-bias test, and agreement between the vectorized and the general path, between
// `got` storage types and between thread counts.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/compare.hpp"

namespace {

using opval::compare_input;
using opval::dims;
using opval::dtype;
using opval::metrics;
using opval::rounding;
using opval::tensor;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
const double f32_ulp_at_1 = std::ldexp(1.0, -23);  // ULP of f32 in [1, 2)
const double bin_factor = std::exp2(1.0 / 8);      // documented percentile resolution

tensor typed(dtype t, const dims& shape, const std::vector<double>& v) {
  tensor x(t, shape);
  x.assign(v);
  return x;
}
tensor f64(const std::vector<double>& v) { return opval::make_f64({static_cast<std::int64_t>(v.size())}, v); }

// The optional tensors of one comparison, kept alive with it.
struct comparison {
  tensor got, ref, bound, compute;
  compare_input in;
  metrics run() {
    in.got = &got;
    in.expected = &ref;
    in.bound = bound.empty() ? nullptr : &bound;
    in.compute_bound = compute.empty() ? nullptr : &compute;
    return opval::compare_outputs(in);
  }
};

metrics compare(const std::vector<double>& got, const std::vector<double>& ref, dtype ulp_type = dtype::f32,
                const std::vector<double>& bound = {}) {
  comparison c{f64(got), f64(ref), bound.empty() ? tensor() : f64(bound), {}, {}};
  c.in.ulp_type = ulp_type;
  return c.run();
}

std::int64_t histogram_total(const metrics& m) {
  std::int64_t s = 0;
  for (auto c : m.ulp_histogram) s += c;
  return s;
}

TEST(compare_errors, abs_rel_and_ulp_errors_of_hand_made_values) {
  // Errors of 0, 1, 2 and 4 ULPs of f32 at 1, 1.5, 2 (ULP 2^-22 there) and -1.
  const double u = f32_ulp_at_1;
  const std::vector<double> ref = {1.0, 1.5, 2.0, -1.0};
  const std::vector<double> got = {1.0, 1.5 + u, 2.0 + 4 * u, -1.0 - 4 * u};
  const metrics m = compare(got, ref);
  EXPECT_EQ(m.count, 4);
  EXPECT_DOUBLE_EQ(m.max_abs_error, 4 * u);
  EXPECT_DOUBLE_EQ(m.mean_abs_error, 9 * u / 4);
  EXPECT_DOUBLE_EQ(m.max_rel_error, 4 * u);  // at -1
  EXPECT_DOUBLE_EQ(m.mean_rel_error, (u / 1.5 + 2 * u + 4 * u) / 4);
  EXPECT_DOUBLE_EQ(m.max_ulps, 4.0);  // 4 ULPs at -1 beat 2 ULPs (4*2^-23) at 2
  EXPECT_DOUBLE_EQ(m.mean_signed_error, (u + 4 * u - 4 * u) / 4);
  // The ULP is that of ulp_type: in bf16 (8 bits) the same errors are 2^-16 as large.
  const metrics b = compare(got, ref, dtype::bf16);
  EXPECT_DOUBLE_EQ(b.max_ulps, 4.0 / 65536);
  EXPECT_DOUBLE_EQ(b.max_abs_error, m.max_abs_error);
}

TEST(compare_errors, ulps_at_the_outputs_scale_ignore_how_close_to_zero_an_error_falls) {
  // A correct sum that cancels to 1e-6 with an error of 2 ULPs of the outputs' scale (4): per
  // element that is millions of ULPs, at the scale it is 2.
  const double scale_ulp = 4 * f32_ulp_at_1;
  const std::vector<double> ref = {4.0, -3.0, 1e-6};
  const std::vector<double> got = {4.0, -3.0, 1e-6 + 2 * scale_ulp};
  const metrics m = compare(got, ref);
  EXPECT_GT(m.max_ulps, 1e6);
  EXPECT_DOUBLE_EQ(m.max_scaled_ulps, 2.0);
  // A wrong element among large values stays large at the scale: a planted bug still shows.
  const metrics wrong = compare({4.0, -3.0 + 0.5, 1e-6}, ref);
  EXPECT_GT(wrong.max_scaled_ulps, 1e5);
  const metrics nan = compare({4.0, std::numeric_limits<double>::quiet_NaN(), 1e-6}, ref);
  EXPECT_TRUE(std::isinf(nan.max_scaled_ulps));
}

TEST(compare_errors, histogram_bins_and_percentiles) {
  // ULP errors (i+1)/1024 for i < 1000: exactly 0.5 ULP (i = 511) belongs to the <= 0.5 bin.
  std::vector<double> ref(1000, 1.5), got(1000);
  for (int i = 0; i < 1000; ++i) got[i] = 1.5 + (i + 1) / 1024.0 * f32_ulp_at_1;
  const metrics m = compare(got, ref);
  ASSERT_EQ(m.ulp_histogram.size(), static_cast<std::size_t>(opval::ulp_bins));
  EXPECT_EQ(histogram_total(m), m.count);
  EXPECT_EQ(m.ulp_histogram[0], 0);
  EXPECT_EQ(m.ulp_histogram[1], 512);
  EXPECT_EQ(m.ulp_histogram[2], 488);
  EXPECT_DOUBLE_EQ(m.max_ulps, 1000 / 1024.0);
  const double p50 = 500 / 1024.0, p99 = 990 / 1024.0;
  EXPECT_GE(m.p50_ulps, p50);
  EXPECT_LE(m.p50_ulps, p50 * bin_factor);
  EXPECT_GE(m.p99_ulps, p99);
  EXPECT_LE(m.p99_ulps, std::min(p99 * bin_factor, m.max_ulps));
}

TEST(compare_errors, one_element_per_histogram_bin) {
  // Bins: 0, (0,0.5], (0.5,1], (1,2], (2,4], (4,16], (16,256], (256,65536], beyond.
  const std::vector<double> ulps = {0, 0.5, 1, 2, 4, 16, 256, 65536, 65537};
  std::vector<double> ref(ulps.size(), 1.25), got;
  for (double x : ulps) got.push_back(1.25 + x * f32_ulp_at_1);
  const metrics m = compare(got, ref);
  EXPECT_EQ(m.ulp_histogram, std::vector<std::int64_t>(opval::ulp_bins, 1));
  // Just past each edge moves the element one bin up.
  std::vector<double> above;
  for (std::size_t i = 1; i + 1 < ulps.size(); ++i) above.push_back(1.25 + ulps[i] * 1.01 * f32_ulp_at_1);
  const metrics n = compare(above, std::vector<double>(above.size(), 1.25));
  for (int bin = 2; bin < opval::ulp_bins; ++bin) EXPECT_EQ(n.ulp_histogram[bin], 1) << "bin " << bin;
  EXPECT_EQ(n.ulp_histogram[1], 0);
}

TEST(compare_bound, beyond_count_and_error_over_bound) {
  // Errors 1/16 .. 5/16 against a bound of 4/16: ratios 0.25, 0.5, 0.75, 1 (not beyond), 1.25.
  std::vector<double> ref(5, 1.0), got, bound(5, 0.25);
  for (int i = 1; i <= 5; ++i) got.push_back(1.0 + i / 16.0);
  const metrics m = compare(got, ref, dtype::f32, bound);
  EXPECT_EQ(m.beyond_bound, 1);
  EXPECT_DOUBLE_EQ(m.max_error_over_bound, 1.25);
  EXPECT_GE(m.median_error_over_bound, 0.75);
  EXPECT_LE(m.median_error_over_bound, 0.75 * bin_factor);
  ASSERT_FALSE(m.worst.empty());
  EXPECT_DOUBLE_EQ(m.worst.front().bound, 0.25);
  EXPECT_DOUBLE_EQ(m.worst.front().got, 1.0 + 5 / 16.0);
  // Without a bound nothing is beyond it.
  EXPECT_EQ(compare(got, ref).beyond_bound, 0);
}

TEST(compare_specials, nan_on_one_side_is_a_mismatch_nan_on_both_is_not) {
  const metrics m = compare({nan_v, 1.0, nan_v, 2.0}, {1.0, nan_v, nan_v, 2.0});
  EXPECT_EQ(m.count, 4);
  EXPECT_EQ(m.nan_mismatch, 2);
  EXPECT_EQ(m.inf_mismatch, 0);
  EXPECT_EQ(compare({nan_v, 2.0}, {nan_v, 2.0}).nan_mismatch, 0);
  // A NaN mismatch is beyond any bound and ranks first among the worst.
  const metrics b = compare({nan_v, 1.5}, {1.0, 1.0}, dtype::f32, {1e-3, 1e-3});
  EXPECT_EQ(b.beyond_bound, 2);
  ASSERT_FALSE(b.worst.empty());
  EXPECT_EQ(b.worst.front().index, dims{0});
}

TEST(compare_specials, inf_disagreement_is_a_mismatch_expected_overflow_is_not) {
  const metrics m = compare({inf, -inf, inf, -inf, 1.0}, {1.0, -inf, -inf, 5.0, inf});
  EXPECT_EQ(m.inf_mismatch, 4);  // all but the matching -inf
  EXPECT_EQ(m.nan_mismatch, 0);
  // A finite reference beyond the output type's max, and got = same-signed infinity: the
  // correct result of rounding to that type.
  const metrics o = compare({inf, -inf}, {1e39, -4e38}, dtype::f32, {0.0, 0.0});
  EXPECT_EQ(o.inf_mismatch, 0);
  EXPECT_EQ(o.beyond_bound, 0);
  // Beyond bf16's overflow threshold (max 3.3895e38 + half its ulp 6.6e35 = 3.3962e38) but
  // within f32's range: overflow only for a bf16 output. Between max and the threshold the
  // value rounds to max: infinity is a mismatch.
  EXPECT_EQ(compare({inf}, {3.397e38}, dtype::bf16).inf_mismatch, 0);
  EXPECT_EQ(compare({inf}, {3.395e38}, dtype::bf16).inf_mismatch, 1);
  EXPECT_EQ(compare({inf}, {3.0e38}, dtype::bf16).inf_mismatch, 1);
  // An exact max stays max (a kernel that turns it into infinity ignored a saturation).
  EXPECT_EQ(compare({inf}, {57344.0}, dtype::f8_e5m2).inf_mismatch, 1);
  // The wrong sign of infinity is still a mismatch.
  EXPECT_EQ(compare({-inf}, {1e39}).inf_mismatch, 1);
}

TEST(compare_specials, negative_zero_is_counted_not_an_error) {
  const metrics m = compare({-0.0, 0.0, 0.0, -0.0, 1.0}, {0.0, -0.0, 0.0, -0.0, 1.0});
  EXPECT_EQ(m.neg_zero_mismatch, 2);
  EXPECT_EQ(m.max_abs_error, 0.0);
  EXPECT_EQ(m.ulp_histogram[0], 5);
}

TEST(compare_shape, cosine_similarity_and_signed_error) {
  const metrics m = compare({1, 2, 3}, {1, 2, 4});
  EXPECT_NEAR(m.cosine_similarity, 17 / (std::sqrt(14.0) * std::sqrt(21.0)), 1e-15);
  EXPECT_DOUBLE_EQ(m.mean_signed_error, -1.0 / 3);
  EXPECT_NEAR(compare({-1, -2}, {1, 2}).cosine_similarity, -1.0, 1e-15);
  EXPECT_DOUBLE_EQ(compare({2, 4}, {1, 2}).cosine_similarity, 1.0);  // scale-blind
}

TEST(compare_shape, all_zero_and_constant_outputs) {
  const metrics zero = compare({0, 0, 0}, {1, -2, 3});
  EXPECT_TRUE(zero.got_all_zero);
  EXPECT_TRUE(zero.got_constant);
  EXPECT_FALSE(zero.ref_constant);
  EXPECT_EQ(zero.cosine_similarity, 0.0);
  const metrics constant = compare({2, 2, 2}, {1, 2, 3});
  EXPECT_FALSE(constant.got_all_zero);
  EXPECT_TRUE(constant.got_constant);
  const metrics varying = compare({0, 2, 3}, {1, 2, 3});
  EXPECT_FALSE(varying.got_all_zero);
  EXPECT_FALSE(varying.got_constant);
  // One element is not "constant" in any telling sense.
  EXPECT_FALSE(compare({2}, {1}).got_constant);
  EXPECT_TRUE(compare({1, 2}, {5, 5}).ref_constant);
}

TEST(compare_shape, ref_constant_within_bounds_and_ref_significant) {
  // Reference values within the sum of the bounds of element 0 and their own count as equal.
  EXPECT_TRUE(compare({1, 1, 1}, {1.0, 1.3, 0.6}, dtype::f32, {0.25, 0.25, 0.25}).ref_constant);
  EXPECT_FALSE(compare({1, 1, 1}, {1.0, 1.3, 0.4}, dtype::f32, {0.25, 0.25, 0.25}).ref_constant);
  // Significant: |ref| strictly above its bound.
  const metrics m = compare({0, 0, 0, 0}, {0.1, 0.6, -2.0, 0.5}, dtype::f32, {0.5, 0.5, 0.5, 0.5});
  EXPECT_EQ(m.ref_significant, 2);
}

TEST(compare_worst, multi_index_of_a_3d_tensor_and_sorted) {
  const dims shape = {3, 4, 5};
  std::vector<double> ref(60), got(60);
  for (int i = 0; i < 60; ++i) ref[i] = got[i] = 1.0 + i / 64.0;
  // Linear positions: [2,1,3] = 2*20+1*5+3 = 48 is the worst, then [0,3,4] = 19, then [1,0,0] = 20.
  got[48] += 3e-3;
  got[19] -= 2e-3;
  got[20] += 1e-3;
  got[7] += 1e-4;
  comparison c{opval::make_f64(shape, got), opval::make_f64(shape, ref), {}, {}, {}};
  c.in.worst_k = 3;
  const metrics m = c.run();
  ASSERT_EQ(m.worst.size(), 3u);
  EXPECT_EQ(m.worst[0].index, (dims{2, 1, 3}));
  EXPECT_EQ(m.worst[1].index, (dims{0, 3, 4}));
  EXPECT_EQ(m.worst[2].index, (dims{1, 0, 0}));
  EXPECT_DOUBLE_EQ(m.worst[0].expected, ref[48]);
  EXPECT_DOUBLE_EQ(m.worst[0].got, got[48]);
  EXPECT_DOUBLE_EQ(m.worst[0].abs_error, std::fabs(got[48] - ref[48]));
  EXPECT_DOUBLE_EQ(m.worst[0].ulps, std::fabs(got[48] - ref[48]) / std::ldexp(1.0, -23));
  for (std::size_t i = 1; i < m.worst.size(); ++i) EXPECT_GE(m.worst[i - 1].abs_error, m.worst[i].abs_error);
}

TEST(compare_worst, ranked_by_error_over_bound_when_bounded) {
  // The largest absolute error has a generous bound; the smaller one exceeds its tight bound.
  comparison c{f64({1.5, 1.01, 1.0}), f64({1.0, 1.0, 1.0}), f64({1.0, 0.001, 1.0}), {}, {}};
  c.in.worst_k = 2;
  const metrics m = c.run();
  ASSERT_EQ(m.worst.size(), 2u);
  EXPECT_EQ(m.worst[0].index, dims{1});
  EXPECT_EQ(m.worst[1].index, dims{0});
}

// Random outputs of a bf16 kernel: round-to-nearest of normal references plus a few larger
// errors, with a bound and a compute bound that makes some elements ineligible for the bias test.
struct random_case {
  std::vector<double> got, ref, bound, compute;
};
random_case make_random_case(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit;
  random_case c;
  for (std::int64_t i = 0; i < n; ++i) {
    const double r = normal(gen) * std::ldexp(1.0, static_cast<int>(i % 7) - 3);
    double g = opval::round_to(dtype::bf16, r);
    if (i % 97 == 0) g = opval::round_to(dtype::bf16, r * (1 + 0.05 * unit(gen)));
    c.ref.push_back(r);
    c.got.push_back(g);
    c.compute.push_back(i % 5 == 0 ? 0.01 * std::fabs(r) : 0.0);
    c.bound.push_back(c.compute.back() + std::ldexp(1.0, -8) * std::fabs(r) + 1e-40);
  }
  return c;
}

metrics compare_random(const random_case& rc, dtype got_type = dtype::f64, int worst_k = 5) {
  const dims shape = {static_cast<std::int64_t>(rc.ref.size())};
  comparison c{typed(got_type, shape, rc.got), f64(rc.ref), f64(rc.bound), f64(rc.compute), {}};
  c.in.ulp_type = dtype::bf16;
  c.in.worst_k = worst_k;
  return c.run();
}

// The error tiles of a random case laid out in `shape`.
opval::error_tiles tiles_random(const random_case& rc, const dims& shape) {
  const tensor got = opval::make_f64(shape, rc.got), ref = opval::make_f64(shape, rc.ref);
  const tensor bound = opval::make_f64(shape, rc.bound), compute = opval::make_f64(shape, rc.compute);
  compare_input in;
  in.got = &got, in.expected = &ref, in.bound = &bound, in.compute_bound = &compute;
  in.ulp_type = dtype::bf16;
  return opval::tile_errors(in);
}

void expect_near_rel(double a, double b, double rel, const char* what) {
  EXPECT_LE(std::fabs(a - b), rel * std::max(std::fabs(a), std::fabs(b))) << what << ": " << a << " vs " << b;
}

// What every path and thread count must agree on exactly, and sums up to reassociation.
void expect_same_metrics(const metrics& a, const metrics& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.max_abs_error, b.max_abs_error);
  EXPECT_EQ(a.max_rel_error, b.max_rel_error);
  EXPECT_EQ(a.max_ulps, b.max_ulps);
  EXPECT_EQ(a.p50_ulps, b.p50_ulps);
  EXPECT_EQ(a.p99_ulps, b.p99_ulps);
  EXPECT_EQ(a.ulp_histogram, b.ulp_histogram);
  EXPECT_EQ(a.beyond_bound, b.beyond_bound);
  EXPECT_EQ(a.max_error_over_bound, b.max_error_over_bound);
  EXPECT_EQ(a.median_error_over_bound, b.median_error_over_bound);
  EXPECT_EQ(a.nan_mismatch, b.nan_mismatch);
  EXPECT_EQ(a.inf_mismatch, b.inf_mismatch);
  EXPECT_EQ(a.neg_zero_mismatch, b.neg_zero_mismatch);
  EXPECT_EQ(a.ref_significant, b.ref_significant);
  EXPECT_EQ(a.got_all_zero, b.got_all_zero);
  EXPECT_EQ(a.got_constant, b.got_constant);
  EXPECT_EQ(a.ref_constant, b.ref_constant);
  EXPECT_EQ(a.bias.eligible, b.bias.eligible);
  EXPECT_EQ(a.bias.biased, b.bias.biased);
  EXPECT_EQ(a.bias.has_power, b.bias.has_power);
  expect_near_rel(a.mean_abs_error, b.mean_abs_error, 1e-12, "mean_abs_error");
  expect_near_rel(a.mean_rel_error, b.mean_rel_error, 1e-12, "mean_rel_error");
  EXPECT_NEAR(a.mean_signed_error, b.mean_signed_error, 1e-12 * a.mean_abs_error);
  expect_near_rel(a.cosine_similarity, b.cosine_similarity, 1e-14, "cosine_similarity");
  EXPECT_NEAR(a.bias.sign_relative_mean, b.bias.sign_relative_mean, 1e-12);
  EXPECT_NEAR(a.bias.plain_mean, b.bias.plain_mean, 1e-12);
  ASSERT_EQ(a.worst.size(), b.worst.size());
  for (std::size_t i = 0; i < a.worst.size(); ++i) {
    EXPECT_EQ(a.worst[i].index, b.worst[i].index) << "worst " << i;
    EXPECT_EQ(a.worst[i].got, b.worst[i].got) << "worst " << i;
    EXPECT_EQ(a.worst[i].ulps, b.worst[i].ulps) << "worst " << i;
  }
}

TEST(compare_paths, vectorized_and_general_paths_agree) {
  // 40000 elements: parallel and many 1024-element chunks. Variant B puts matching NaNs in two
  // chunks (sending every element of those chunks down the general path); variant A has an
  // exact zero there instead. Both get a -0/+0 pair in a NaN chunk and in a finite chunk.
  random_case a = make_random_case(40000, 7);
  for (std::int64_t i : {3000, 20500}) a.got[i] = a.ref[i] = 0.0, a.compute[i] = a.bound[i] = 0.0;
  a.got[3001] = -0.0, a.ref[3001] = 0.0, a.got[30001] = 0.0, a.ref[30001] = -0.0;
  random_case b = a;
  for (std::int64_t i : {3000, 20500}) b.got[i] = b.ref[i] = nan_v;
  const metrics ma = compare_random(a), mb = compare_random(b);
  EXPECT_EQ(ma.neg_zero_mismatch, 2);
  EXPECT_EQ(mb.neg_zero_mismatch, 2);
  EXPECT_EQ(mb.nan_mismatch, 0);
  EXPECT_GT(ma.beyond_bound, 0);  // the planted 5% errors
  EXPECT_EQ(ma.count, mb.count);
  EXPECT_EQ(ma.max_abs_error, mb.max_abs_error);
  EXPECT_EQ(ma.max_rel_error, mb.max_rel_error);
  EXPECT_EQ(ma.max_ulps, mb.max_ulps);
  EXPECT_EQ(ma.beyond_bound, mb.beyond_bound);
  EXPECT_EQ(ma.max_error_over_bound, mb.max_error_over_bound);
  EXPECT_EQ(ma.ref_significant, mb.ref_significant);
  EXPECT_EQ(ma.got_constant, mb.got_constant);
  EXPECT_EQ(ma.ref_constant, mb.ref_constant);
  EXPECT_EQ(ma.bias.eligible, mb.bias.eligible);  // zero references are never eligible
  // The NaN pairs are matches: they land in the exact bin, as the zeros they replace do, and
  // the histogram still sums to the count.
  EXPECT_EQ(ma.ulp_histogram[0], mb.ulp_histogram[0]);
  EXPECT_EQ(std::accumulate(mb.ulp_histogram.begin(), mb.ulp_histogram.end(), std::int64_t{0}), mb.count);
  for (int bin = 1; bin < opval::ulp_bins; ++bin) EXPECT_EQ(ma.ulp_histogram[bin], mb.ulp_histogram[bin]) << bin;
  // Means are over finite elements: sums agree.
  expect_near_rel(ma.mean_abs_error * 40000, mb.mean_abs_error * 39998, 1e-12, "sum of |error|");
  expect_near_rel(ma.mean_rel_error * 40000, mb.mean_rel_error * 39998, 1e-12, "sum of relative errors");
  EXPECT_NEAR(ma.mean_signed_error * 40000, mb.mean_signed_error * 39998, 1e-12 * ma.mean_abs_error * 40000);
  expect_near_rel(ma.cosine_similarity, mb.cosine_similarity, 1e-14, "cosine");
  EXPECT_NEAR(ma.bias.sign_relative_mean, mb.bias.sign_relative_mean, 1e-12);
  EXPECT_NEAR(ma.bias.plain_mean, mb.bias.plain_mean, 1e-12);
  EXPECT_NEAR(ma.bias.sign_relative_z, mb.bias.sign_relative_z, 1e-9);
  EXPECT_GE(mb.p50_ulps, ma.p50_ulps / bin_factor);
  EXPECT_LE(mb.p50_ulps, ma.p50_ulps * bin_factor);
  EXPECT_GE(mb.p99_ulps, ma.p99_ulps / bin_factor);
  EXPECT_LE(mb.p99_ulps, ma.p99_ulps * bin_factor);
  ASSERT_EQ(ma.worst.size(), mb.worst.size());
  for (std::size_t i = 0; i < ma.worst.size(); ++i) {
    EXPECT_EQ(ma.worst[i].index, mb.worst[i].index) << "worst " << i;
    EXPECT_EQ(ma.worst[i].ulps, mb.worst[i].ulps) << "worst " << i;
    EXPECT_EQ(ma.worst[i].bound, mb.worst[i].bound) << "worst " << i;
  }
}

TEST(compare_paths, general_path_alone_matches_vectorized_on_small_outputs) {
  // One chunk, so a NaN pair sends everything down the general path (single-threaded too).
  random_case a = make_random_case(1000, 11);
  a.got[0] = a.ref[0] = a.compute[0] = a.bound[0] = 0.0;
  random_case b = a;
  b.got[0] = b.ref[0] = nan_v;
  const metrics ma = compare_random(a), mb = compare_random(b);
  EXPECT_EQ(ma.max_ulps, mb.max_ulps);
  EXPECT_EQ(ma.beyond_bound, mb.beyond_bound);
  EXPECT_EQ(ma.max_error_over_bound, mb.max_error_over_bound);
  EXPECT_EQ(ma.bias.eligible, mb.bias.eligible);
  EXPECT_EQ(ma.ulp_histogram[0], mb.ulp_histogram[0]);
  for (int bin = 1; bin < opval::ulp_bins; ++bin) EXPECT_EQ(ma.ulp_histogram[bin], mb.ulp_histogram[bin]) << bin;
  ASSERT_EQ(ma.worst.size(), mb.worst.size());
  for (std::size_t i = 0; i < ma.worst.size(); ++i) EXPECT_EQ(ma.worst[i].index, mb.worst[i].index);
}

TEST(compare_paths, got_type_does_not_change_metrics) {
  // bf16 values are exact in f32 and f64: the f32 fast path, the f64 path and the generic
  // (converted) bf16 path see the same numbers.
  const random_case rc = make_random_case(20000, 3);
  const metrics m64 = compare_random(rc, dtype::f64);
  expect_same_metrics(m64, compare_random(rc, dtype::f32));
  expect_same_metrics(m64, compare_random(rc, dtype::bf16));
}

TEST(compare_paths, thread_count_does_not_change_metrics) {
  const random_case rc = make_random_case(50000, 5);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const metrics one = compare_random(rc, dtype::f32, 8);
  omp_set_num_threads(3);
  const metrics three = compare_random(rc, dtype::f32, 8);
  omp_set_num_threads(saved);
  expect_same_metrics(one, three);
  EXPECT_EQ(histogram_total(one), 50000);
}

// Not a bit may change with the thread count: the shards of one run, on nodes with other core
// counts, must merge into the whole run's records (docs/FLEET.md). Ties among the worst
// elements included: the first and last of each 1000 elements get the same large error.
TEST(compare_paths, thread_count_does_not_change_a_single_bit) {
  random_case rc = make_random_case(200000, 11);
  for (std::size_t i = 0; i < rc.got.size(); i += 1000) rc.ref[i] = 0.5, rc.got[i] = 1.5, rc.bound[i] = 0x1p-100;
  const int saved = omp_get_max_threads();
  std::vector<metrics> runs;
  std::vector<opval::error_tiles> tiles;
  for (int threads : {1, 2, 3, 7}) {
    omp_set_num_threads(threads);
    runs.push_back(compare_random(rc, dtype::f32, 8));
    tiles.push_back(tiles_random(rc, {40, 10, 500}));
  }
  omp_set_num_threads(saved);
  for (std::size_t t = 1; t < runs.size(); ++t) {
    EXPECT_EQ(tiles[0].max_error_over_bound, tiles[t].max_error_over_bound) << "threads run " << t;
    const metrics &a = runs[0], &b = runs[t];
    expect_same_metrics(a, b);
    EXPECT_EQ(a.mean_abs_error, b.mean_abs_error);
    EXPECT_EQ(a.mean_rel_error, b.mean_rel_error);
    EXPECT_EQ(a.mean_signed_error, b.mean_signed_error);
    EXPECT_EQ(a.cosine_similarity, b.cosine_similarity);
    EXPECT_EQ(a.bias.distinct, b.bias.distinct);
    EXPECT_EQ(a.bias.sign_relative_z, b.bias.sign_relative_z);
    EXPECT_EQ(a.bias.plain_z, b.bias.plain_z);
    ASSERT_EQ(a.worst.size(), b.worst.size());
    for (std::size_t k = 0; k < a.worst.size(); ++k) EXPECT_EQ(a.worst[k].index, b.worst[k].index) << k;
  }
  // The tied worst elements are the first ones, in index order.
  ASSERT_EQ(runs[0].worst.size(), 8u);
  for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(runs[0].worst[k].index, (dims{static_cast<std::int64_t>(1000 * k)}));
}

// --- where the errors lie: the tiles of a failing output's heatmap ----------------------

// Leading dimensions fold into rows; at most 32 tiles a side; each tile the largest
// |error| / bound of its elements, a NaN mismatch infinitely over, agreeing NaNs not at all.
TEST(compare_tiles, fold_leading_dimensions_and_keep_each_tiles_worst) {
  const dims shape = {70, 3, 100};  // 210 rows of 100: tiles of 7 x 4, a grid of 30 x 25
  const std::int64_t n = 70 * 3 * 100;
  std::vector<double> ref(n, 1.0), got(n, 1.0), bound(n, 0.5);
  got[(65 * 3 + 2) * 100 + 57] = 4.0;  // row 197, column 57: tile (28, 14), 3 / 0.5 over
  got[5] = std::nan("");                // tile (0, 1)
  got[n - 1] = ref[n - 1] = std::nan("");
  const tensor g = opval::make_f64(shape, got), r = opval::make_f64(shape, ref), b = opval::make_f64(shape, bound);
  compare_input in;
  in.got = &g, in.expected = &r, in.bound = &b;
  const opval::error_tiles t = opval::tile_errors(in);
  EXPECT_EQ(t.rows, 210);
  EXPECT_EQ(t.cols, 100);
  EXPECT_EQ(t.tile_rows, 7);
  EXPECT_EQ(t.tile_cols, 4);
  ASSERT_EQ(t.max_error_over_bound.size(), 30u);
  for (std::size_t tr = 0; tr < 30; ++tr) {
    ASSERT_EQ(t.max_error_over_bound[tr].size(), 25u);
    for (std::size_t tc = 0; tc < 25; ++tc) {
      const double expected = tr == 28 && tc == 14 ? 6.0 : tr == 0 && tc == 1 ? inf : 0.0;
      EXPECT_EQ(t.max_error_over_bound[tr][tc], expected) << tr << "," << tc;
    }
  }
  // A vector is one row; a grid never has more tiles than elements.
  const std::vector<double> got1 = {1, 2, 3, 4, 5}, ref1 = {1, 2, 3, 4, 6};
  const tensor g1 = opval::make_f64({5}, got1), r1 = opval::make_f64({5}, ref1);
  in.got = &g1, in.expected = &r1, in.bound = nullptr;
  const opval::error_tiles t1 = opval::tile_errors(in);
  EXPECT_EQ(t1.rows, 1);
  EXPECT_EQ(t1.tile_cols, 1);
  EXPECT_EQ(t1.max_error_over_bound, (std::vector<std::vector<double>>{{0, 0, 0, 0, inf}}));
}

// --- the rounding-bias test ------------------------------------------------------------

std::vector<double> normal_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(n);
  for (double& x : v) x = normal(gen);
  return v;
}

// Rounds toward +inf in bf16.
double round_up_bf16(double x) {
  const double t = opval::round_to(dtype::bf16, x, rounding::rz);
  if (x < 0 || t == x) return t;
  return t + opval::ulp(dtype::bf16, t);
}

template <class F>
metrics bias_of(const std::vector<double>& ref, F&& round, bool bias_test = true) {
  std::vector<double> got;
  for (double r : ref) got.push_back(round(r));
  comparison c{f64(got), f64(ref), {}, f64(std::vector<double>(ref.size(), 0.0)), {}};
  c.in.ulp_type = dtype::bf16;
  c.in.bias_test = bias_test;
  c.in.bias_skip_reason = "for the test";
  return c.run();
}

TEST(compare_bias, round_to_nearest_is_not_biased) {
  const auto ref = normal_values(20000, 1);
  const metrics m = bias_of(ref, [](double r) { return opval::round_to(dtype::bf16, r); });
  EXPECT_TRUE(m.bias.has_power) << m.bias.note;
  EXPECT_FALSE(m.bias.biased) << m.bias.note;
  EXPECT_EQ(m.bias.eligible, 20000);
  EXPECT_GT(m.bias.distinct, 5000);
  EXPECT_LT(std::fabs(m.bias.sign_relative_mean), 0.05);
  EXPECT_LT(std::fabs(m.bias.plain_mean), 0.05);
  // The same, but every element has a compute bound of 1/4 ULP or more: nothing is eligible.
  std::vector<double> got;
  for (double r : ref) got.push_back(opval::round_to(dtype::bf16, r, rounding::rz));
  std::vector<double> big;
  for (double r : ref) big.push_back(std::fabs(r));  // >= 1/4 ULP of bf16 for every r
  comparison c{f64(got), f64(ref), {}, f64(big), {}};
  c.in.ulp_type = dtype::bf16;
  const metrics none = c.run();
  EXPECT_EQ(none.bias.eligible, 0);
  EXPECT_FALSE(none.bias.biased);
}

TEST(compare_bias, truncation_is_biased_toward_zero) {
  const metrics m = bias_of(normal_values(20000, 2), [](double r) {
    return opval::round_to(dtype::bf16, r, rounding::rz);
  });
  EXPECT_TRUE(m.bias.has_power) << m.bias.note;
  EXPECT_TRUE(m.bias.biased) << m.bias.note;
  EXPECT_LT(m.bias.sign_relative_mean, -0.3);
  EXPECT_LT(m.bias.sign_relative_z, -6);
  EXPECT_LT(std::fabs(m.bias.plain_mean), 0.05);  // symmetric data: the plain mean cancels
}

TEST(compare_bias, rounding_up_is_biased_by_the_plain_mean) {
  const metrics m = bias_of(normal_values(20000, 3), round_up_bf16);
  EXPECT_TRUE(m.bias.biased) << m.bias.note;
  EXPECT_GT(m.bias.plain_mean, 0.3);
  EXPECT_GT(m.bias.plain_z, 6);
  EXPECT_LT(std::fabs(m.bias.sign_relative_mean), 0.05);
}

TEST(compare_bias, too_few_elements_have_no_power) {
  const metrics m = bias_of(normal_values(100, 4), [](double r) {
    return opval::round_to(dtype::bf16, r, rounding::rz);
  });
  EXPECT_FALSE(m.bias.has_power);
  EXPECT_FALSE(m.bias.biased);
  EXPECT_NE(m.bias.note.find("too few"), std::string::npos) << m.bias.note;
  EXPECT_NE(m.bias.note.find("power"), std::string::npos) << m.bias.note;
}

TEST(compare_bias, repeated_reference_values_count_once) {
  // 20000 elements but only 10 distinct values: 10 rounding errors, not 20000.
  const auto distinct = normal_values(10, 5);
  std::vector<double> ref;
  for (int i = 0; i < 20000; ++i) ref.push_back(distinct[i % 10]);
  const metrics m = bias_of(ref, [](double r) { return opval::round_to(dtype::bf16, r, rounding::rz); });
  EXPECT_EQ(m.bias.eligible, 20000);
  EXPECT_LT(m.bias.distinct, 30);
  EXPECT_FALSE(m.bias.has_power) << m.bias.note;
  EXPECT_FALSE(m.bias.biased);
}

TEST(compare_bias, values_sharing_a_rounding_position_share_one_error) {
  // log_softmax's y = x - c per row, x on the bf16 grid and y rounded to bf16 (found by the
  // nightly tier: log_softmax shape=3x129 dt=bf16:f32:bf16 fill=large at seed 2): within a row
  // and binade every element lies at the same position between two bf16 values, so a correct
  // round-to-nearest kernel makes one rounding error per (row, binade), not one per element.
  // Thousands of distinct values are a handful of independent errors: no power, no verdict.
  // Here x in [100, 120) on its grid of 0.5 and y = x - c in (0, 21): y's grid is as fine or
  // finer, so y / ulp(y) = x / ulp(y) - c / ulp(y) has one fractional part per row and binade.
  std::vector<double> ref;
  const auto x = normal_values(4096, 7);
  for (int row = 0; row < 3; ++row) {
    const double c = 99.123456789 + row * 0.0161803;
    for (double v : x) ref.push_back(opval::round_to(dtype::bf16, 110 + 3 * v, rounding::rne) - c);
  }
  const metrics m = bias_of(ref, [](double r) { return opval::round_to(dtype::bf16, r, rounding::rne); });
  EXPECT_GT(m.bias.eligible, 1000);
  EXPECT_LT(m.bias.distinct, 100) << m.bias.note;
  EXPECT_FALSE(m.bias.has_power) << m.bias.note;
  EXPECT_FALSE(m.bias.biased) << m.bias.note;
  // The same values truncated instead are still found when they are independent.
  const metrics t = bias_of(normal_values(20000, 8), [](double r) { return opval::round_to(dtype::bf16, r, rounding::rz); });
  EXPECT_TRUE(t.bias.has_power) << t.bias.note;
  EXPECT_TRUE(t.bias.biased) << t.bias.note;
}

TEST(compare_bias, disabled_test_is_never_biased_and_says_why) {
  const metrics m = bias_of(
      normal_values(20000, 6), [](double r) { return opval::round_to(dtype::bf16, r, rounding::rz); }, false);
  EXPECT_FALSE(m.bias.biased);
  EXPECT_FALSE(m.bias.has_power);
  EXPECT_NE(m.bias.note.find("not applied"), std::string::npos) << m.bias.note;
  EXPECT_NE(m.bias.note.find("for the test"), std::string::npos) << m.bias.note;
  EXPECT_LT(m.bias.sign_relative_mean, -0.3);  // still measured, just not judged
}

}  // namespace
