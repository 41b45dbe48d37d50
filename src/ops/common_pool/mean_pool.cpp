// Mean pooling (mean_pool.hpp): contracts, fill, the fp64 reference, the contract emulation
// and the error bound that avg_pool2d and global_avg_pool share.
#include "ops/common_pool/mean_pool.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error_model.hpp"
#include "core/fill.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "ops/common_reduce/reduction_numerics.hpp"

namespace opval::ops::pool {

using reduce::sum_order;

namespace {

double divisor(const window_values& v, divisor_rule rule) {
  return static_cast<double>(rule == divisor_rule::padded ? v.padded : static_cast<std::int64_t>(v.inside.size()));
}

const mean_pool_spec& mean_spec_of(const problem& p) {
  const auto* s = dynamic_cast<const mean_pool_spec*>(&p.spec());
  if (!s) throw error(fmt::format("{} is not a mean-pooling op", p.spec().name()));
  return *s;
}

}  // namespace

std::vector<std::string> mean_pool_spec::contracts() const {
  return {"f32", "bf16:f32:bf16", "f16:f32:f16", "f16:f16:f16"};
}

void mean_pool_spec::validate(const problem& p) const {
  validate_window(p);
  const contract& c = p.dt;
  auto io = [](dtype t) { return t == dtype::f32 || t == dtype::bf16 || t == dtype::f16; };
  const bool acc_ok = c.acc == dtype::f32 || c.acc == dtype::f64 || (c.acc == dtype::f16 && c.src == dtype::f16);
  if (!io(c.src) || !io(c.dst) || !acc_ok || c.rounds_inputs())
    throw error(fmt::format("{} does not support contract {} (float only: f32, bf16:f32:bf16, f16:f32:f16, "
                            "f16:f16:f16)", name(), c.types_string()));
}

fill_traits mean_pool_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  fill_params fp;
  fp.kind = p.fill == "default" ? fill_kind::normal : parse_fill_kind(p.fill);
  if (fp.kind == fill_kind::large)
    fp.scale = std::min(traits(p.dt.src).max, traits(p.dt.acc).max / double(window_of(p).taps())) / 2;
  fill_tensor(in[0], fp, seed, 0);
  fill_traits f;
  f.same_sign = fp.kind == fill_kind::positive;
  f.has_specials = fp.kind == fill_kind::special;
  return f;
}

void mean_pool_spec::mean_reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const divisor_rule rule = divisor_of(p);
  // fp64 pairwise: its error is far below any contract's bound.
  out[0].assign(pool_each(window_of(p), in[0].to_vector(), [&](const window_values& v) {
    const auto n = static_cast<std::int64_t>(v.inside.size());
    return reduce::ordered_sum(n, sum_order::pairwise, [&](std::int64_t i) { return v.inside[i]; },
                               [](double t) { return t; }) /
           divisor(v, rule);
  }));
}

void mean_pool_simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out, const mean_kernel& k) {
  const mean_pool_spec& s = mean_spec_of(p);
  const divisor_rule rule = s.divisor_of(p);
  const contract_arith ar(p.dt);
  const auto acc = [&](double t) { return ar.acc(t); };
  const std::vector<double> y = pool_each(s.window_of(p), in[0].to_vector(), [&](const window_values& v) {
    const auto n = static_cast<std::int64_t>(v.inside.size());
    const double d = divisor(v, rule);
    if (k.prescaled) {
      const double inv = acc(1.0 / d);
      return ar.out(reduce::ordered_sum(n, k.order, [&](std::int64_t i) { return acc(ar.input(v.inside[i]) * inv); }, acc));
    }
    return ar.out(acc(reduce::ordered_sum(n, k.order, [&](std::int64_t i) { return ar.input(v.inside[i]); }, acc) / d));
  });
  out[0].assign(y, p.dt.dst_round);
}

std::vector<error_bound> mean_pool_spec::mean_bound(const problem& p, const fill_traits& f, const bound_options& o,
                                                    std::span<const tensor> in, std::span<const tensor> ref) const {
  const window g = window_of(p);
  const divisor_rule rule = divisor_of(p);
  // One gamma for the longest sum (a window's taps inside the input): border windows sum fewer.
  const accumulation_gamma ag = accumulation_constant(double(g.taps()), double(g.outputs()), p.dt, f, o);
  const double g2 = gamma_deterministic(2, unit_roundoff(p.dt.acc, p.dt.acc_round));
  // sum|x| / d per window, in one pass over the windows (mean_error only uses their ratio).
  const std::vector<double> abs_means = pool_each(g, in[0].to_vector(), [&](const window_values& v) {
    double s = 0;
    for (double x : v.inside) s += std::fabs(x);
    return s / divisor(v, rule);
  });
  error_bound b;
  b.meaningful = ag.meaningful;
  b.why_not = ag.why_not;
  b.compute = tensor(dtype::f64, g.dst_shape());
  double* out = b.compute.data_as<double>();
  const double* y = ref[0].data_as<double>();
  for (std::size_t k = 0; k < abs_means.size(); ++k)
    // NaN/Inf results are compared by class, not by bound.
    out[k] = std::isfinite(abs_means[k]) ? reduce::mean_error(ag.gamma * abs_means[k], abs_means[k], 1.0, y[k], g2) : 0.0;
  b.formula = fmt::format("gamma*(sum|x|/d)*(1+g2) + g2*(sum|x|/d+|y|), d the divisor, gamma={} ({}), g2={:.3g}",
                          ag.gamma, ag.formula, g2);
  return {b};
}

}  // namespace opval::ops::pool
