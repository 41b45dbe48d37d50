#pragma once
// Test helpers shared by test_softmax.cpp and test_attention.cpp: run one problem's stages
// directly (fill, simulate, reference, bound) and wrap a plain function as a backend, for
// planted bugs and legitimate variant kernels.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/error_model.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::testing {

inline std::vector<tensor> allocate(const std::vector<operand>& ops, bool f64) {
  std::vector<tensor> t;
  for (const auto& o : ops) t.emplace_back(f64 ? dtype::f64 : o.type, o.shape, f64 ? layout{} : o.lay);
  return t;
}

/// Every stage of one case, run directly on the op spec.
struct direct_case {
  problem p;
  std::vector<tensor> in, out, ref;
  fill_traits ft;
  std::vector<error_bound> bounds;
};

/// Fills the inputs of p (or keeps `in` when given), simulates, computes the reference and bounds.
inline direct_case run_direct(const problem& p, std::uint64_t seed = 1, std::vector<tensor> in = {}) {
  direct_case c{p, {}, {}, {}, {}, {}};
  const op_spec& s = p.spec();
  s.validate(p);
  if (in.empty()) {
    c.in = allocate(s.inputs(p), false);
    c.ft = s.fill(p, seed, c.in);
  } else {
    c.in = std::move(in);
  }
  c.out = allocate(s.outputs(p), false);
  c.ref = allocate(s.outputs(p), true);
  s.simulate(p, c.in, c.out);
  s.reference(p, c.in, c.ref);
  c.bounds = s.bound(p, c.ft, bound_options{}, c.in, c.ref);
  return c;
}

/// max |out - ref| / (compute bound + output rounding) over output 0; +inf on a NaN or
/// infinity disagreement (NaN and equal infinities are exact matches).
inline double worst_ratio(const direct_case& c) {
  const std::vector<double> got = c.out[0].to_vector();
  const double* ref = c.ref[0].data_as<double>();
  const double* bnd = c.bounds[0].compute.data_as<double>();
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(ref[i]) || std::isnan(got[i])) {
      if (std::isnan(ref[i]) != std::isnan(got[i])) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isinf(ref[i]) || std::isinf(got[i])) {
      if (ref[i] != got[i]) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double total = bnd[i] + output_rounding_bound(c.p.dt.dst, c.p.dt.dst_round, c.p.dt.denorm, ref[i]);
    worst = std::max(worst, std::fabs(got[i] - ref[i]) / total);
  }
  return worst;
}

/// A backend computing with a plain function (a planted bug or a variant kernel).
class function_backend final : public backend {
 public:
  using kernel = std::function<void(const problem&, std::span<const tensor>, std::span<tensor>)>;
  function_backend(std::string name, kernel k) : name_(std::move(name)), k_(std::move(k)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "test"; }
  support supports(const problem&) const override { return support::yes(); }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    k_(p, in, out);
    return {name_, ""};
  }

 private:
  std::string name_;
  kernel k_;
};

/// run_case with default options (bound policy, seed 1, perturbation check on).
inline case_result run_with(const std::string& line, backend& b, std::uint64_t seed = 1) {
  run_options o;
  o.seed = seed;
  return run_case(parse_problem(line), b, o);
}

}  // namespace opval::testing
