// reduce: hand-computed sums, means and maxima; empty reductions; NaN and -0 semantics of
// max; metamorphic properties; the emulation within its bound for every summation order; and
// end-to-end verdicts: the suites pass under sim, planted bugs fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "opval/error.hpp"
#include "ops/op_testing.hpp"
#include "ops/reduce/reduce.hpp"

namespace {

using namespace opval;
using opval::ops::reduce::sum_order;

namespace ot = opval::testing;
using ot::direct_case;
using ot::function_backend;
using ot::inf;

/// The sim kernel summing in `order`.
ot::kernel_fn in_order(sum_order order) {
  return [order](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    ops::reduce::reduce_simulate(p, in, out, order);
  };
}

/// Recomputes the kernel (sim with `order`), reference and bounds for the current inputs.
void recompute(direct_case& c, sum_order order = sum_order::forward) { c.recompute(in_order(order)); }

direct_case make_case(const problem& p, std::uint64_t seed = 1, sum_order order = sum_order::forward) {
  return ot::run_direct(p, seed, {}, in_order(order));
}

direct_case make_case(const std::string& line, std::uint64_t seed = 1, sum_order order = sum_order::forward) {
  return make_case(parse_problem(line), seed, order);
}

/// A case on given input values (row-major).
direct_case with_values(const std::string& line, const std::vector<double>& x) {
  direct_case c = make_case(line);
  c.in[0].assign(x);
  recompute(c);
  return c;
}

std::vector<double> values(const tensor& t) { return t.to_vector(); }

// ---------------------------------------------------------------------------------------------

TEST(reduce, hand_computed) {
  const std::vector<double> x{1, 2, 3, 4, 5, 6};  // 2x3
  EXPECT_EQ(values(with_values("reduce shape=2x3 axes=1 kind=sum", x).ref[0]), (std::vector<double>{6, 15}));
  EXPECT_EQ(values(with_values("reduce shape=2x3 axes=0 kind=sum", x).out[0]), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(values(with_values("reduce shape=2x3 axes=1 kind=mean", x).out[0]), (std::vector<double>{2, 5}));
  EXPECT_EQ(values(with_values("reduce shape=2x3 axes=0 kind=max", x).out[0]), (std::vector<double>{4, 5, 6}));
  direct_case all = with_values("reduce shape=2x3 axes=0x1 kind=sum dt=i32", x);
  EXPECT_EQ(all.out[0].rank(), 0);
  EXPECT_EQ(values(all.out[0]), (std::vector<double>{21}));
  direct_case kept = with_values("reduce shape=2x3 axes=1 kind=max keepdims=1 dt=bf16:f32:bf16", x);
  EXPECT_EQ(kept.out[0].shape(), (dims{2, 1}));
  EXPECT_EQ(values(kept.out[0]), (std::vector<double>{3, 6}));
  // 3-D, middle and outer+inner axes: x[i][j][k] = 100 i + 10 j + k over 2x3x4.
  std::vector<double> y;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) y.push_back(100 * i + 10 * j + k);
  EXPECT_EQ(values(with_values("reduce shape=2x3x4 axes=1 kind=sum", y).out[0]),
            (std::vector<double>{30, 33, 36, 39, 330, 333, 336, 339}));
  EXPECT_EQ(values(with_values("reduce shape=2x3x4 axes=0x2 kind=max", y).out[0]),
            (std::vector<double>{103, 113, 123}));
  // Negative axes (through the API) count from the end.
  problem p = parse_problem("reduce shape=2x3 kind=sum");
  p.set("axes", dims{-1});
  direct_case neg = make_case(p);
  neg.in[0].assign(x);
  recompute(neg);
  EXPECT_EQ(values(neg.out[0]), (std::vector<double>{6, 15}));
}

TEST(reduce, empty_reductions) {
  problem p = parse_problem("reduce axes=1 dt=f32");
  p.set("shape", dims{3, 0});
  for (const char* kind : {"sum", "mean", "max"}) {
    p.set("kind", std::string(kind));
    direct_case c = make_case(p);
    for (const auto& t : {c.ref[0], c.out[0]}) {
      ASSERT_EQ(t.numel(), 3);
      for (double v : values(t)) {
        if (std::string(kind) == "sum") {
          EXPECT_TRUE(v == 0 && !std::signbit(v));
        } else if (std::string(kind) == "mean") {
          EXPECT_TRUE(std::isnan(v));
        } else {
          EXPECT_EQ(v, -inf);
        }
      }
    }
  }
  p.dt = parse_contract_types("i32");
  p.set("kind", std::string("max"));
  EXPECT_EQ(values(make_case(p).out[0]), std::vector<double>(3, -2147483648.0));
  // A kept axis of extent 0: no outputs at all.
  p.set("shape", dims{0, 5});
  EXPECT_EQ(make_case(p).out[0].numel(), 0);
}

TEST(reduce, max_semantics_nan_wins_and_positive_zero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  direct_case c = with_values("reduce shape=3x3 axes=1 kind=max", {1, nan, 3, -0.0, 0.0, -0.0, -inf, -0.0, -5});
  for (const auto& t : {c.ref[0], c.out[0]}) {
    const auto got = values(t);
    EXPECT_TRUE(std::isnan(got[0]));
    EXPECT_TRUE(got[1] == 0 && !std::signbit(got[1])) << "max(-0, +0, -0) is +0";
    EXPECT_TRUE(got[2] == 0 && std::signbit(got[2])) << "max(-inf, -0, -5) is -0";
  }
  EXPECT_EQ(std::signbit(ops::reduce::max_of(0.0, -0.0)), false);
  EXPECT_EQ(std::signbit(ops::reduce::max_of(-0.0, 0.0)), false);
  EXPECT_TRUE(std::isnan(ops::reduce::max_of(nan, inf)));
  EXPECT_TRUE(std::isnan(ops::reduce::max_of(-inf, nan)));
}

// sum is linear and, with max, invariant to permuting the reduced elements.
TEST(reduce, metamorphic_linearity_and_permutation) {
  direct_case a = make_case("reduce shape=16x257 axes=1 kind=sum", 1);
  direct_case b = make_case("reduce shape=16x257 axes=1 kind=sum", 2);
  const auto xa = values(a.in[0]), xb = values(b.in[0]);
  std::vector<double> mixed(xa.size());
  for (std::size_t i = 0; i < xa.size(); ++i) mixed[i] = 0.5 * xa[i] + xb[i];  // exact in f64
  tensor t(dtype::f64, a.in[0].shape());
  t.assign(mixed);
  direct_case m = a;
  m.ref = ot::allocate(m.p.spec().outputs(m.p), true);
  m.in = {t};
  m.run_reference();
  for (int r = 0; r < 16; ++r)
    EXPECT_NEAR(values(m.ref[0])[r], 0.5 * values(a.ref[0])[r] + values(b.ref[0])[r], 1e-12);

  for (const char* kind : {"sum", "max"}) {
    direct_case c = make_case(std::string("reduce shape=4x1000 axes=1 dt=f32 kind=") + kind);
    const auto before = values(c.ref[0]);
    const auto before_got = values(c.out[0]);
    std::vector<double> x = values(c.in[0]);
    for (int r = 0; r < 4; ++r) std::reverse(x.begin() + r * 1000, x.begin() + (r + 1) * 1000);
    std::rotate(x.begin(), x.begin() + 1000, x.end());  // rows move too: outputs rotate
    c.in[0].assign(x);
    recompute(c);
    const auto after = values(c.ref[0]);
    for (int r = 0; r < 4; ++r) {
      EXPECT_NEAR(after[r], before[(r + 1) % 4], 1e-12) << kind;
      if (std::string(kind) == "max") {
        EXPECT_EQ(values(c.out[0])[r], before_got[(r + 1) % 4]);
      }
    }
    EXPECT_LE(ot::checked_worst_ratio(c), 1.0);
  }
}

TEST(reduce, validation_names_the_attribute) {
  EXPECT_NE(ot::validation_error("reduce shape=4x8 axes=2").find("axes=2"), std::string::npos);
  EXPECT_NE(ot::validation_error("reduce shape=4x8 axes=1x1").find("twice"), std::string::npos);
  EXPECT_NE(ot::validation_error("reduce shape=4x8 axes=1 kind=mean dt=i32").find("kind=mean"), std::string::npos);
  EXPECT_NE(ot::validation_error("reduce shape=4x8 axes=1 dt=tf32").find("does not support contract"), std::string::npos);
  EXPECT_NE(ot::validation_error("reduce shape=4x8 axes=1 dt=bf16:bf16:bf16").find("does not support contract"), std::string::npos);
  EXPECT_EQ(ot::validation_error("reduce shape=4x8x3 axes=0x2 kind=max keepdims=1 dt=f16:f16:f16"), "");
}

TEST(reduce, sim_and_other_orders_within_bound_on_suites) {
  for (sum_order order : {sum_order::forward, sum_order::reversed, sum_order::pairwise}) {
    SCOPED_TRACE("order " + std::to_string(int(order)));
    ot::expect_within_bound_on_suites("reduce", in_order(order));
  }
}

// gamma * sum|x| is the standard a-priori bound; on zero-mean data the partial sums grow only
// as sqrt(k), so observed/bound is about 1 / (2 lambda sqrt(n)): 1e-3 at n = 4096 is expected.
TEST(reduce, bound_is_not_vacuous_on_normal_data) {
  for (const char* line : {"reduce shape=64x4096 axes=1 dt=f32", "reduce shape=64x512 axes=1 dt=f16:f16:f16",
                           "reduce shape=4096x64 axes=0 kind=mean dt=f32"}) {
    direct_case c = make_case(line);
    const double ratio = ot::checked_worst_ratio(c);
    EXPECT_GT(ratio, 1e-3) << line;
    EXPECT_LE(ratio, 1.0) << line;
  }
}

// ---------------------------------------------------------------------------------------------
// End to end through run_case

TEST(reduce, suites_pass_under_sim) {
  for (const char* tag : {"smoke", "regression"}) ot::expect_suite_passes_under_sim(tag, {"reduce"});
}

/// A kernel reducing the last axis of a 2-D problem in f32 with `sum` (a row's terms to its sum),
/// then the mean's division: for summation orders the library's sim does not have.
ot::kernel_fn rows_summed_by(std::function<float(const std::vector<float>&)> sum) {
  return [sum](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const std::vector<double> x = in[0].to_vector();
    const std::size_t n = static_cast<std::size_t>(in[0].shape().back());
    std::vector<double> y;
    for (std::size_t r = 0; r < x.size() / n; ++r) {
      const std::vector<float> row(x.begin() + r * n, x.begin() + (r + 1) * n);
      const float s = sum(row);
      y.push_back(p.get_choice("kind") == "mean" ? s / static_cast<float>(n) : s);
    }
    out[0].assign(y);
  };
}

float blocked_sum(const std::vector<float>& x) {  // 8 partial sums (SIMD lanes), added at the end
  float lane[8] = {};
  for (std::size_t i = 0; i < x.size(); ++i) lane[i % 8] += x[i];
  float s = 0;
  for (float l : lane) s += l;
  return s;
}

float kahan_sum(const std::vector<float>& x) {  // compensated: more accurate than the contract asks
  float s = 0, c = 0;
  for (float v : x) {
    const float t = v - c, u = s + t;
    c = (u - s) - t;
    s = u;
  }
  return s;
}

TEST(reduce, other_summation_orders_pass_at_every_seed) {
  for (sum_order order : {sum_order::reversed, sum_order::pairwise})
    ot::expect_passes_at_every_seed("order " + std::to_string(int(order)), in_order(order),
                                    {"reduce shape=8x4096 axes=1 dt=f32", "reduce shape=300x7x5 axes=0x2 kind=mean dt=bf16:f32:bf16",
                                     "reduce shape=16x500 axes=1 dt=f16:f16:f16 fill=cancel"});
  for (auto [name, sum] : {std::pair{"blocked", &blocked_sum}, std::pair{"kahan", &kahan_sum}})
    ot::expect_passes_at_every_seed(name, rows_summed_by(sum),
                                    {"reduce shape=8x4096 axes=1 dt=f32", "reduce shape=16x500 axes=1 kind=mean dt=bf16:f32:bf16",
                                     "reduce shape=16x1000 axes=1 dt=f32 fill=cancel"});
}

// --- one planted bug per feature of the generated suites' table, caught at seeds 1..8 --------

TEST(reduce, wrong_axis_fails_at_every_seed) {
  // Square problems: reducing the other axis gives the same output shape.
  ot::expect_fails_at_every_seed("other_axis", ot::simulating_as([](problem& q) {
                                   q.set("axes", dims{q.get_dims("axes")[0] == 0 ? 1 : 0});
                                 }),
                                 {"reduce shape=13x13 axes=0 dt=f32", "reduce shape=17x17 axes=1 kind=max dt=bf16:f32:bf16"});
}

TEST(reduce, mean_without_division_fails_at_every_seed) {
  ot::expect_fails_at_every_seed("mean_as_sum", ot::simulating_as([](problem& q) { q.set("kind", std::string("sum")); }),
                                 {"reduce shape=13x17 axes=1 kind=mean dt=f32", "reduce shape=5x6x7 axes=0x2 kind=mean dt=bf16:f32:bf16"});
}

TEST(reduce, empty_reduction_left_zero_fails_at_every_seed) {
  // Reducing 0 elements: the kernel returns the buffer's 0 where max is -Inf and mean NaN.
  ot::expect_fails_at_every_seed("empty_left_zero", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    if (in[0].numel() == 0) out[0] = ot::zeros_like(out[0]);
  },
                                 {"reduce shape=2x0x4 axes=1 kind=max dt=f32", "reduce shape=2x0x4 axes=1 kind=mean dt=bf16:f32:bf16"});
}

// How much of the f32 bound the other summation orders use, up to n = 16384 (the table of
// docs/NUMERICS.md, "Over seeds 1..8 and reduction lengths up to 16384", takes these lines).
TEST(reduce, tightness_of_other_summation_orders) {
  for (const auto& named : {std::pair{sum_order::reversed, "reversed"}, std::pair{sum_order::pairwise, "pairwise"}}) {
    const sum_order order = named.first;  // not a structured binding: lambdas capture it (clang 14)
    function_backend b("order", [order](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
      ops::reduce::reduce_simulate(p, in, out, order);
    });
    ot::expect_tight_within_bound(std::string("variant:") + named.second, b, [](std::int64_t n) {
      return "reduce shape=8x" + std::to_string(n) + " axes=1 kind=sum dt=f32:f32:f32";
    });
  }
}

TEST(reduce, f16_accumulation_fails_an_f32_contract) {
  function_backend b("f16_accumulation", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    problem q = p;
    q.dt.acc = dtype::f16;
    ops::reduce::reduce_simulate(q, in, out, sum_order::forward);
  });
  const case_result r = ot::run_with("reduce shape=16x1000 axes=1 dt=f16:f32:f16", b);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
}

TEST(reduce, dropping_the_last_term_fails) {
  function_backend b("drop_last_term", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    tensor x = in[0].contiguous();
    const std::int64_t n = x.shape().back();
    for (std::int64_t r = 0; r < x.numel() / n; ++r) x.set_at(r * n + n - 1, 0.0);
    const tensor xs[] = {x};
    ops::reduce::reduce_simulate(p, xs, out, sum_order::forward);
  });
  for (const char* line : {"reduce shape=16x1000 axes=1 dt=f32", "reduce shape=16x33 axes=1 kind=mean dt=bf16:f32:bf16",
                           "reduce shape=256x8 axes=1 kind=max dt=f32 fill=positive"}) {
    const case_result r = ot::run_with(line, b);
    EXPECT_EQ(r.v.st, state::failed) << line << ": " << r.v.reason;
  }
}

TEST(reduce, max_ignoring_nan_fails) {
  function_backend b("max_ignoring_nan", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    std::vector<double> x = in[0].to_vector();
    for (double& v : x)
      if (std::isnan(v)) v = -inf;  // fmax-style: NaN loses
    tensor clean(dtype::f64, in[0].shape());
    clean.assign(x);
    const tensor xs[] = {clean};
    ops::reduce::reduce_simulate(p, xs, out, sum_order::forward);
  });
  // At every seed, on a large and a tiny problem: the special fill puts a NaN in every tensor.
  ot::expect_at_every_seed(b,
                          {"reduce shape=64x40 axes=1 kind=max dt=f32 fill=special",
                           "reduce shape=3x5 axes=1 kind=max dt=bf16:f32:bf16 fill=special",
                           "reduce shape=2x3x4 axes=0x2 kind=max dt=f16:f32:f16 fill=special"},
                          state::failed, "NaN");
}

TEST(reduce, truncated_output_fails_and_zeros_are_mistrusted) {
  function_backend truncating("truncating", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    problem q = p;
    q.dt.dst_round = rounding::rz;
    ops::reduce::reduce_simulate(q, in, out, sum_order::forward);
  });
  const case_result r = ot::run_with("reduce shape=20000x16 axes=1 kind=mean dt=bf16:f32:bf16", truncating);
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
  function_backend zeros("zeros", [](const problem&, std::span<const tensor>, std::span<tensor> out) {
    out[0].assign(std::vector<double>(static_cast<std::size_t>(out[0].numel()), 0.0));
  });
  EXPECT_EQ(ot::run_with("reduce shape=16x64 axes=1 dt=f32", zeros).v.st, state::mistrusted);
}

}  // namespace
