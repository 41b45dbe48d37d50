#pragma once
// Helpers shared by test_matmul and test_conv2d: allocating a problem's operands, running
// its reference / simulation, and backends with planted bugs or legitimate variants.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/error_model.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace opval::test {

/// The operands of one case, allocated as the op says and filled with `seed`.
struct gemm_case {
  problem p;
  std::vector<tensor> in, out, ref;
  fill_traits traits;

  explicit gemm_case(const std::string& line, std::uint64_t seed = 1) : p(parse_problem(line)) {
    p.spec().validate(p);
    for (const auto& o : p.spec().inputs(p)) in.emplace_back(o.type, o.shape, o.lay);
    for (const auto& o : p.spec().outputs(p)) {
      out.emplace_back(o.type, o.shape, o.lay);
      ref.emplace_back(dtype::f64, o.shape);
    }
    traits = p.spec().fill(p, seed, in);
  }
  void run_reference() { p.spec().reference(p, in, ref); }
  void run_simulate() { p.spec().simulate(p, in, out); }
  std::vector<double> reference_values() {
    run_reference();
    return ref[0].to_vector();
  }
  /// Checks |sim - ref| <= compute bound + output rounding elementwise; returns the largest
  /// error / bound ratio.
  double sim_error_over_bound() {
    run_reference();
    run_simulate();
    const auto b = p.spec().bound(p, traits, bound_options{}, in, ref);
    EXPECT_TRUE(b[0].meaningful) << p.to_string();
    const auto got = out[0].to_vector(), want = ref[0].to_vector(), comp = b[0].compute.to_vector();
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) continue;
      const double total = comp[i] + output_rounding_bound(p.dt.dst, p.dt.dst_round, p.dt.denorm, want[i]);
      const double err = std::abs(got[i] - want[i]);
      EXPECT_LE(err, total) << p.to_string() << " element " << i << " got " << got[i] << " want " << want[i];
      if (total > 0) worst = std::max(worst, err / total);
    }
    return worst;
  }
};

/// A backend whose execute() is any function of (problem, inputs, outputs).
class function_backend final : public backend {
 public:
  using fn = std::function<void(const problem&, std::span<const tensor>, std::span<tensor>)>;
  function_backend(std::string name, fn f) : name_(std::move(name)), f_(std::move(f)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "test"; }
  support supports(const problem&) const override { return support::yes(); }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    f_(p, in, out);
    return {name_, ""};
  }

 private:
  std::string name_;
  fn f_;
};

/// run_case of one descriptor with a backend under the default bound policy.
inline case_result run_with(const std::string& line, backend& b, std::uint64_t seed = 1) {
  run_options o;
  o.seed = seed;
  return run_case(parse_problem(line), b, o);
}

/// Summation orders a correct kernel may use, in f32.
enum class sum_order { forward, reversed, split_k, pairwise };

/// The f32 dot product of x and y in the given order (products rounded by fmaf).
inline float dot_in_order(const std::vector<float>& x, const std::vector<float>& y, std::size_t lo,
                          std::size_t hi, sum_order o) {
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
  }
  return 0;
}

}  // namespace opval::test
