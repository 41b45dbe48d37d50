// Special values under contracts that change them (contract_changes_specials,
// src/core/output_judging.hpp): a contract that rounds or flushes its inputs turns a tiny value
// into 0, so 0*Inf = NaN where the exact inputs give Inf, and one rounding toward zero saturates
// a quotient at the largest finite value where the exact one overflows. The judge accepts what
// the contract's own emulation gives there, and nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op_testing.hpp"

namespace opval {
namespace {

using testing::allocate;
using testing::every_seed;
using testing::expect_at_every_seed;
using testing::expect_fails_at_every_seed;
using testing::expect_passes_at_every_seed;
using testing::filled_case;
using testing::kernel_fn;
using testing::remapped;
using testing::simulating_as;
using testing::simulating_on;

// Problems where the contract changes a special value of the exact result at every seed (the
// test below checks that): products and quotients of the special fill's tiny subnormals with
// its infinities, under input rounding (tf32, bf16), flushing and narrowing to f16, and
// quotients by tiny divisors under rz.
const std::vector<std::string> products = {
    "matmul m=160 n=160 k=256 dt=tf32 fill=special",
    "matmul m=160 n=160 k=256 dt=f32@bf16:f32:f32 fill=special",
    "mul shape_a=16411 shape_b=16411 dt=f32 fill=special denorm=ftz",
    "mul shape_a=129x127 shape_b=127 dt=f32:f16:f16 fill=special",
};
const std::vector<std::string> quotients = {
    "div shape_a=16411 shape_b=16411 dt=f32 fill=special denorm=ftz",
    "div shape_a=16411 shape_b=16411 dt=f32 fill=special acc_round=rz",
    "div shape_a=16411 shape_b=16411 dt=f16:f16:f16 fill=special acc_round=rz",
};
// A cancelling fill's tiny divisors: flushed, or a quotient beyond f16's range (at some seeds).
const std::vector<std::string> cancelling = {
    "div shape_a=16411 shape_b=16411 dt=f16:f16:f16 fill=cancel acc_round=rz",
    "div shape_a=16411 shape_b=16411 dt=f16:f32:f16 fill=cancel denorm=ftz",
};

std::vector<std::string> all_lines() {
  std::vector<std::string> v = products;
  v.insert(v.end(), quotients.begin(), quotients.end());
  return v;
}

// Elements where the contract's emulation gives another special value (or a saturated max)
// than the fp64 reference on the stored inputs.
std::int64_t changed_by_contract(const std::string& line, std::uint64_t seed) {
  testing::direct_case c = filled_case(line, seed);
  c.run_simulate();
  c.run_reference();
  const std::vector<double> sim = c.out[0].to_vector(), ref = c.ref[0].to_vector();
  const double max = traits(c.p.dt.dst).max;
  std::int64_t n = 0;
  for (std::size_t i = 0; i < sim.size(); ++i) {
    const bool special = !std::isfinite(sim[i]) || !std::isfinite(ref[i]) || std::fabs(sim[i]) == max;
    const bool same = sim[i] == ref[i] || (std::isnan(sim[i]) && std::isnan(ref[i]));
    if (special && !same && !(std::isinf(sim[i]) && std::fabs(ref[i]) > max)) ++n;
  }
  return n;
}

TEST(SpecialValues, TheContractChangesThemAtEverySeed) {
  // Otherwise the tests below would test nothing.
  for (const std::string& line : all_lines())
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed)
      EXPECT_GT(changed_by_contract(line, seed), 0) << line << " seed " << seed;
}

TEST(SpecialValues, SimPassesWhereTheContractChangesThem) {
  auto sim = make_sim_backend();
  expect_at_every_seed(*sim, all_lines(), state::passed);
  expect_at_every_seed(*sim, cancelling, state::passed);
}

TEST(SpecialValues, AKernelKeepingTheExactInputsPasses) {
  // Rounding or flushing the inputs is what the contract allows, not what it requires: a kernel
  // on the exact inputs (f32 throughout, subnormals kept) gives the exact special values.
  expect_passes_at_every_seed("exact inputs", simulating_as([](problem& q) {
                                q.dt.math = q.dt.src;
                                q.dt.denorm = denormals::ieee;
                              }),
                              {products[0], products[2], quotients[0]});
}

// The kernel `k` with each element where the contract's emulation gives NaN and the exact
// reference does not replaced by `value`.
kernel_fn replacing_contract_nans(double value) {
  return [value](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    std::vector<tensor> ref = allocate(p.spec().outputs(p), true);
    p.spec().reference(p, in, ref);
    std::vector<double> y = out[0].to_vector();
    const std::vector<double> r = ref[0].to_vector();
    for (std::size_t i = 0; i < y.size(); ++i)
      if (std::isnan(y[i]) && !std::isnan(r[i])) y[i] = value;
    out[0].assign(y);
  };
}

TEST(SpecialValues, ZeroWhereTheContractGivesNanFailsNamingTheElement) {
  expect_fails_at_every_seed("0 for NaN", replacing_contract_nans(0.0), {products[0], products[2]}, "also accepted");
}

TEST(SpecialValues, IgnoringInfinitiesFails) {
  // Infinities read as 0: neither the exact nor the contract's result.
  expect_fails_at_every_seed("Inf ignored", simulating_on([](const problem&, std::vector<tensor>& x) {
                               for (tensor& t : x)
                                 t = remapped(t, [](const tensor& s, const dims& i) {
                                   const double v = s.get(i);
                                   return std::isinf(v) ? 0.0 : v;
                                 });
                             }),
                             {products[1], products[3]}, "Inf");
}

TEST(SpecialValues, HalfTheSaturatedQuotientFails) {
  // Under rz a quotient beyond the range is the largest finite value, not another.
  expect_fails_at_every_seed("half max", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    std::vector<double> y = out[0].to_vector();
    for (double& v : y)
      if (std::fabs(v) == traits(p.dt.dst).max) v /= 2;
    out[0].assign(y);
  }, {quotients[1], quotients[2]});
}

// Subnormals flushed where the contract keeps them: the special fill's subnormals near the
// smallest normal (in every tensor, and paired at the same output elements of a and b) make
// what a flushing kernel loses exceed the bound of activations and binary ops.
const std::vector<std::string> flushable = {
    "gelu shape=4099 dt=f32 fill=special",        "gelu shape=3x5 approximate=tanh dt=bf16:f32:bf16 fill=special",
    "silu shape=4099 dt=f32 fill=special",        "silu shape=3x5 dt=f16:f32:f16 fill=special",
    "tanh shape=4099 dt=f32 fill=special",        "tanh shape=3x5 dt=bf16:f32:bf16 fill=special",
    "erf shape=4099 dt=f32 fill=special",         "erf shape=3x5 dt=f16:f32:f16 fill=special",
    "add shape_a=33x65 shape_b=65 dt=f32 fill=special", "add shape_a=31 shape_b=31 dt=f16:f32:f16 fill=special",
    "add shape_a=37x53 shape_b=37x53 dt=bf16:f32:bf16 fill=special",
    "mul shape_a=33x65 shape_b=65 dt=f32 fill=special", "mul shape_a=257 shape_b=257 dt=f16:f32:f16 fill=special",
    "div shape_a=33x65 shape_b=33x1 dt=f32 fill=special",
};

// Each subnormal input of a float type read as a zero of its sign.
tensor flushed(const tensor& t) {
  return remapped(t, [](const tensor& s, const dims& i) {
    const double v = s.get(i);
    return std::fabs(v) < traits(s.type()).min_normal ? std::copysign(0.0, v) : v;
  });
}

// A kernel flushing its subnormal inputs (DAZ), keeping its arithmetic otherwise.
kernel_fn flushing_inputs() {
  return simulating_on([](const problem&, std::vector<tensor>& x) {
    for (tensor& t : x) t = flushed(t);
  });
}

// A kernel flushing its subnormal results (FTZ), keeping its arithmetic otherwise.
kernel_fn flushing_results() {
  return [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    out[0] = flushed(out[0]);
  };
}

std::vector<std::string> with_option(const std::vector<std::string>& lines, const std::string& option) {
  std::vector<std::string> v;
  for (const std::string& l : lines) v.push_back(l + " " + option);
  return v;
}

TEST(SpecialValues, FlushingSubnormalsFailsWhereTheContractKeepsThem) {
  expect_fails_at_every_seed("flushing inputs", flushing_inputs(), flushable);
  // A quotient of two subnormals is normal: div's results are not where flushing shows.
  expect_fails_at_every_seed("flushing results", flushing_results(),
                             std::vector<std::string>(flushable.begin(), flushable.end() - 1));
}

TEST(SpecialValues, FlushingSubnormalsPassesUnderDenormFtz) {
  const std::vector<std::string> ftz = with_option(flushable, "denorm=ftz");
  expect_passes_at_every_seed("flushing inputs", flushing_inputs(), ftz);
  expect_passes_at_every_seed("flushing results", flushing_results(), ftz);
  auto sim = make_sim_backend();
  expect_at_every_seed(*sim, flushable, state::passed);
}

}  // namespace
}  // namespace opval
