#pragma once
// Kernels for the elementwise ops' tests (src/ops/<op>/test_<op>.cpp): a formula evaluated per
// element in the contract's acc, and an elementary function spending its whole claimed error.
#include <cmath>
#include <functional>
#include <vector>

#include "ops/common_eltwise/eltwise_math.hpp"
#include "ops/op_testing.hpp"

namespace opval::testing {

/// A kernel computing y = f(x) per element in the contract's acc (each step rounded there),
/// then storing y to dst.
inline kernel_fn elementwise_kernel(std::function<double(double, const ops::eltwise::acc_steps&)> f) {
  return [f](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const ops::eltwise::acc_steps s(p.dt);
    const std::vector<double> x = in[0].to_vector();
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = s.store(f(s.load(x[i]), s));
    out[0].assign(y);
  };
}

/// A kernel whose f is off by the full claimed ulps of acc (`claimed(p)`, less the half ulp of
/// its own rounding) in direction `dir` (+1 or -1): a sound bound must pass it.
inline kernel_fn off_by_claimed_ulps(std::function<double(double)> f, std::function<double(const problem&)> claimed,
                                     double dir) {
  return [=](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    const ops::eltwise::acc_steps s(p.dt);
    const std::vector<double> x = in[0].to_vector();
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double xa = s.load(x[i]);
      const double v = f(xa);
      y[i] = s.store(std::isfinite(xa) ? round_to(p.dt.acc, v + dir * (claimed(p) - 0.5) * ulp(p.dt.acc, v)) : v);
    }
    out[0].assign(y);
  };
}

}  // namespace opval::testing
