// layer_norm and rms_norm: hand-computed values, metamorphic properties of the reference,
// the contract emulation within the error bound (also for Welford and other summation
// orders), and end-to-end verdicts: the suites pass under sim, planted bugs fail.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/error.hpp"
#include "opval/error_model.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"
#include "ops/layer_norm/norm_common.hpp"

namespace {

using namespace opval;
using opval::ops::norm::kernel_variant;
using opval::ops::norm::norm_kind;
using opval::ops::norm::variance_algo;
using opval::ops::reduce::sum_order;

/// One case's tensors: inputs (filled), the fp64 reference and the sim output.
struct case_data {
  problem p;
  fill_traits ft;
  std::vector<tensor> in, ref, got;
};

std::vector<tensor> allocate(const std::vector<operand>& ops, bool f64) {
  std::vector<tensor> t;
  for (const auto& o : ops) t.emplace_back(f64 ? dtype::f64 : o.type, o.shape, f64 ? layout{} : o.lay);
  return t;
}

norm_kind kind_of(const problem& p) { return p.op() == "layer_norm" ? norm_kind::layer : norm_kind::rms; }

/// Fills, computes the reference and runs the kernel variant (sim by default).
case_data make_case(const std::string& line, std::uint64_t seed = 1, const kernel_variant& v = {}) {
  case_data c{parse_problem(line), {}, {}, {}, {}};
  const op_spec& spec = c.p.spec();
  spec.validate(c.p);
  c.in = allocate(spec.inputs(c.p), false);
  c.ref = allocate(spec.outputs(c.p), true);
  c.got = allocate(spec.outputs(c.p), false);
  c.ft = spec.fill(c.p, seed, c.in);
  spec.reference(c.p, c.in, c.ref);
  ops::norm::norm_simulate(kind_of(c.p), c.p, c.in, c.got, v);
  return c;
}

/// max over elements of |got - ref| / (compute bound + output rounding); NaN/Inf must agree.
double worst_error_over_bound(const case_data& c) {
  const auto b = c.p.spec().bound(c.p, c.ft, bound_options{}, c.in, c.ref);
  EXPECT_TRUE(b[0].meaningful) << c.p.to_string();
  const double* ref = c.ref[0].data_as<double>();
  const double* comp = b[0].compute.data_as<double>();
  double worst = 0;
  for (std::int64_t i = 0; i < c.ref[0].numel(); ++i) {
    const double got = c.got[0].at(i);
    if (!std::isfinite(ref[i])) {
      EXPECT_TRUE(std::isnan(ref[i]) ? std::isnan(got) : got == ref[i]) << c.p.to_string() << " at " << i;
      continue;
    }
    const double total = comp[i] + output_rounding_bound(c.p.dt.dst, c.p.dt.dst_round, c.p.dt.denorm, ref[i]);
    worst = std::max(worst, std::fabs(got - ref[i]) / total);
  }
  return worst;
}

std::vector<double> values(const tensor& t) { return t.to_vector(); }

// ---------------------------------------------------------------------------------------------

TEST(norms, hand_computed_layer_norm) {
  case_data c = make_case("layer_norm shape=1x4 eps=0 affine=1 dt=f32");
  c.in[0].assign(std::vector<double>{1, 2, 3, 4});
  c.in[1].assign(std::vector<double>{1, 2, 1, 1});
  c.in[2].assign(std::vector<double>{0, 0, 0, 1});
  c.p.spec().reference(c.p, c.in, c.ref);
  const double s = std::sqrt(1.25);  // mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4
  const std::vector<double> expected{-1.5 / s, 2 * -0.5 / s, 0.5 / s, 1.5 / s + 1};
  const auto got = values(c.ref[0]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-15);
}

TEST(norms, hand_computed_rms_norm) {
  case_data c = make_case("rms_norm shape=1x4 eps=0.5 affine=1 dt=f32");
  c.in[0].assign(std::vector<double>{1, -2, 3, 4});
  c.in[1].assign(std::vector<double>{1, 1, 2, 1});
  c.p.spec().reference(c.p, c.in, c.ref);
  const double r = 1 / std::sqrt(7.5 + 0.5);  // mean square (1 + 4 + 9 + 16) / 4 = 7.5
  const std::vector<double> expected{r, -2 * r, 6 * r, 4 * r};
  const auto got = values(c.ref[0]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-15);
}

TEST(norms, layer_norm_of_one_element_is_beta) {
  case_data c = make_case("layer_norm shape=5x1 eps=1e-5 dt=f32");
  const std::vector<double> beta(5, c.in[2].at(0));
  EXPECT_EQ(values(c.ref[0]), beta);
  EXPECT_EQ(values(c.got[0]), beta);
  EXPECT_EQ(c.p.spec().perturbed_input(c.p), 2) << "x cannot change the output here: perturb beta";
}

// The reference is invariant to shifting a row (layer_norm) and, with eps = 0, to scaling it.
TEST(norms, metamorphic_shift_and_scale) {
  for (const char* op : {"layer_norm", "rms_norm"}) {
    case_data c = make_case(std::string(op) + " shape=6x37 eps=0 affine=1 dt=f32");
    const auto base = values(c.ref[0]);
    std::vector<double> x = values(c.in[0]);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] *= (i / 37 + 1) * 0.75;  // per-row c > 0, exact
    if (std::string(op) == "layer_norm")
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += 3.0 * static_cast<double>(i / 37) - 7;
    tensor moved(dtype::f64, c.in[0].shape());
    moved.assign(x);
    std::vector<tensor> in = c.in;
    in[0] = moved;
    c.p.spec().reference(c.p, in, c.ref);
    const auto after = values(c.ref[0]);
    for (std::size_t i = 0; i < base.size(); ++i) EXPECT_NEAR(after[i], base[i], 1e-12 * (1 + std::fabs(base[i]))) << op;
  }
}

TEST(norms, zero_variance_rows_give_beta) {
  case_data c = make_case("layer_norm shape=9x40 eps=1e-5 dt=f32 fill=constant_rows");
  const auto ref = values(c.ref[0]);
  const auto beta = values(c.in[2]);
  for (std::int64_t r = 0; r < 9; r += 3)
    for (std::int64_t i = 0; i < 40; ++i) EXPECT_EQ(ref[r * 40 + i], beta[i]) << "row " << r;
  EXPECT_LE(worst_error_over_bound(c), 1.0);
  // rms_norm: the all-zero rows among them normalize to exactly 0.
  case_data z = make_case("rms_norm shape=9x40 eps=1e-5 dt=f32 fill=constant_rows");
  for (std::int64_t i = 0; i < 40; ++i) EXPECT_EQ(z.got[0].at(3 * 40 + i), 0.0);
}

TEST(norms, padded_rows_give_the_same_result) {
  case_data dense = make_case("layer_norm shape=6x33 dt=bf16:f32:bf16");
  case_data padded = make_case("layer_norm shape=6x33 ld=40 dt=bf16:f32:bf16");
  EXPECT_EQ(padded.in[0].strides(), (dims{40, 1}));
  EXPECT_EQ(padded.got[0].strides(), (dims{40, 1}));
  EXPECT_EQ(values(padded.in[0]), values(dense.in[0]));
  EXPECT_EQ(values(padded.got[0]), values(dense.got[0]));
}

TEST(norms, validation_names_the_attribute) {
  auto message = [](const std::string& line) {
    try {
      problem p = parse_problem(line);
      p.spec().validate(p);
    } catch (const opval::error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("layer_norm shape=4x8 dt=f16:f16:f16").find("does not support contract"), std::string::npos);
  EXPECT_NE(message("layer_norm shape=4x8 dt=tf32").find("does not support contract"), std::string::npos);
  EXPECT_NE(message("rms_norm shape=4x8 norm_axes=3").find("norm_axes=3"), std::string::npos);
  EXPECT_NE(message("layer_norm shape=4x8 eps=-1").find("eps"), std::string::npos);
  EXPECT_NE(message("layer_norm shape=4x8 eps=0 fill=constant_rows").find("eps > 0"), std::string::npos);
  EXPECT_NE(message("layer_norm shape=4x0").find("extent"), std::string::npos);
  EXPECT_NE(message("layer_norm shape=4x8 ld=7").find("ld=7"), std::string::npos);
  EXPECT_EQ(message("layer_norm shape=4x3x8 norm_axes=2 dt=bf16:f32:bf16 fill=constant_rows"), "");
}

// Every suite line: sim within the bound, and the bound not vacuous where data is random.
TEST(norms, sim_within_bound_on_suites) {
  for (const char* op : {"layer_norm", "rms_norm"}) {
    for (const char* tag : {"smoke", "regression"}) {
      for (const auto& line : find_op(op).suite(tag)) {
        case_data c = make_case(line);
        EXPECT_LE(worst_error_over_bound(c), 1.0) << line;
      }
    }
  }
}

// The bound is tight where rounding errors are random: f32 output, default fill.
TEST(norms, bound_is_tight_on_default_fill) {
  for (const char* line : {"layer_norm shape=8x768 dt=f32", "rms_norm shape=8x768 dt=f32",
                           "layer_norm shape=8x4096 dt=bf16:f32:bf16 affine=0"}) {
    case_data c = make_case(line);
    const double ratio = worst_error_over_bound(c);
    EXPECT_GT(ratio, 0.003) << line;
    EXPECT_LE(ratio, 1.0) << line;
  }
}

// Legitimately different kernels stay within the bound: Welford, reversed and pairwise sums.
TEST(norms, other_algorithms_within_bound) {
  const std::vector<kernel_variant> variants{{variance_algo::welford, sum_order::forward},
                                             {variance_algo::welford, sum_order::reversed},
                                             {variance_algo::two_pass, sum_order::reversed},
                                             {variance_algo::two_pass, sum_order::pairwise}};
  const std::vector<std::string> lines{
      "layer_norm shape=6x4096 eps=1e-12 dt=f32 fill=cancel", "layer_norm shape=16x768 dt=f32",
      "layer_norm shape=8x1000 eps=0.1 affine=0 dt=bf16:f32:bf16 fill=wide",
      "layer_norm shape=9x257 dt=f16:f32:f16 fill=constant_rows", "rms_norm shape=8x4096 dt=f32 fill=large",
      "layer_norm shape=4x97 eps=1e-12 dt=f32 fill=positive"};
  for (const auto& line : lines)
    for (const auto& v : variants)
      for (std::uint64_t seed : {1, 2, 3}) {
        case_data c = make_case(line, seed, v);
        EXPECT_LE(worst_error_over_bound(c), 1.0) << line << " variant " << int(v.variance) << "/" << int(v.order);
      }
}

// ---------------------------------------------------------------------------------------------
// End to end through run_case

/// A backend whose kernel is a function: the sim kernel with other algorithm choices, or a bug.
class function_backend final : public backend {
 public:
  using kernel = std::function<void(const problem&, std::span<const tensor>, std::span<tensor>)>;
  explicit function_backend(kernel k) : k_(std::move(k)) {}
  std::string name() const override { return "test-kernel"; }
  std::string version() const override { return "0"; }
  support supports(const problem&) const override { return support::yes(); }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    k_(p, in, out);
    return {"test kernel", ""};
  }

 private:
  kernel k_;
};

function_backend variant_backend(kernel_variant v) {
  return function_backend([v](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    ops::norm::norm_simulate(kind_of(p), p, in, out, v);
  });
}

state run(const std::string& line, backend& b, std::string* reason = nullptr) {
  const case_result r = run_case(parse_problem(line), b, run_options{});
  if (reason) *reason = r.v.reason;
  return r.v.st;
}

TEST(norms, suites_pass_under_sim) {
  auto sim = make_backend("sim");
  for (const char* op : {"layer_norm", "rms_norm"}) {
    for (const char* tag : {"smoke", "regression"}) {
      const auto start = std::chrono::steady_clock::now();
      for (const auto& line : find_op(op).suite(tag)) {
        std::string why;
        EXPECT_EQ(run(line, *sim, &why), state::passed) << line << ": " << why;
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%s %s suite: %zu cases in %.2f s\n", op, tag, find_op(op).suite(tag).size(), s);
    }
  }
}

TEST(norms, legitimate_kernels_pass) {
  for (const auto& v : {kernel_variant{variance_algo::welford, sum_order::forward},
                        kernel_variant{variance_algo::two_pass, sum_order::pairwise},
                        kernel_variant{variance_algo::two_pass, sum_order::reversed}}) {
    auto b = variant_backend(v);
    for (const char* line : {"layer_norm shape=16x768 dt=f32", "layer_norm shape=4x4096 dt=bf16:f32:bf16 fill=cancel",
                             "layer_norm shape=12x33 eps=0.1 dt=f16:f32:f16 fill=constant_rows",
                             "rms_norm shape=16x768 dt=f32", "rms_norm shape=4x1000 dt=bf16:f32:bf16 affine=0"}) {
      std::string why;
      EXPECT_EQ(run(line, b, &why), state::passed) << line << " variant " << int(v.variance) << ": " << why;
    }
  }
}

TEST(norms, wrong_eps_fails) {
  // The kernel uses 1e-5 where the problem asks 1e-3 (or 0.1): visible on rows whose variance
  // is small (the default fill has row scales down to 1/8, variance 1/64).
  auto b = variant_backend({variance_algo::two_pass, sum_order::forward, 1e-5});
  for (const char* line : {"layer_norm shape=16x768 eps=0.001 dt=f32", "layer_norm shape=16x768 eps=0.1 dt=bf16:f32:bf16",
                           "rms_norm shape=16x257 eps=0.001 dt=f16:f32:f16"}) {
    std::string why;
    EXPECT_EQ(run(line, b, &why), state::failed) << line;
    EXPECT_NE(why.find("beyond the bound"), std::string::npos) << why;
  }
}

TEST(norms, all_zero_output_is_mistrusted) {
  function_backend zeros([](const problem&, std::span<const tensor>, std::span<tensor> out) {
    out[0].assign(std::vector<double>(static_cast<std::size_t>(out[0].numel()), 0.0));
  });
  EXPECT_EQ(run("layer_norm shape=8x64 dt=f32", zeros), state::mistrusted);
  EXPECT_EQ(run("rms_norm shape=8x64 dt=bf16:f32:bf16", zeros), state::mistrusted);
}

TEST(norms, forgetting_gamma_or_beta_fails) {
  function_backend no_affine([](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    ops::norm::norm_simulate(kind_of(p), p, in.first(1), out);
  });
  EXPECT_EQ(run("layer_norm shape=8x64 dt=f32", no_affine), state::failed);
  EXPECT_EQ(run("rms_norm shape=8x64 dt=bf16:f32:bf16", no_affine), state::failed);
}

// One-pass E[x^2] - E[x]^2 is not a legitimate kernel: it loses |mean|^2/var digits. The
// bound rejects it where that loss exceeds what a Welford kernel may lose (5 gamma max|x|
// max|x - mean|): short rows whose mean is thousands of times their spread.
TEST(norms, one_pass_variance_fails_on_extreme_offsets) {
  const kernel_variant one_pass{variance_algo::one_pass, sum_order::forward};
  case_data c = make_case("layer_norm shape=64x16 eps=1e-12 affine=0 dt=f32", 1, one_pass);
  std::vector<double> x = values(c.in[0]);
  for (double& v : x) v = static_cast<float>(4096.0 + v / 4);
  c.in[0].assign(x);
  c.p.spec().reference(c.p, c.in, c.ref);
  ops::norm::norm_simulate(norm_kind::layer, c.p, c.in, c.got, one_pass);
  EXPECT_GT(worst_error_over_bound(c), 1.0);
  for (auto algo : {variance_algo::two_pass, variance_algo::welford}) {
    ops::norm::norm_simulate(norm_kind::layer, c.p, c.in, c.got, {algo, sum_order::forward});
    EXPECT_LE(worst_error_over_bound(c), 1.0);
  }
}

}  // namespace
