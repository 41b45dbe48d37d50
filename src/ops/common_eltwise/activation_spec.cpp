#include "ops/common_eltwise/activation_spec.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ops/common_eltwise/eltwise_fill.hpp"
#include "ops/common_eltwise/suite_lines.hpp"
#include "opval/error.hpp"

namespace opval::ops::eltwise {
std::vector<std::string> activation_spec::contracts() const {
  return {"f32", "bf16:f32:bf16", "f16:f32:f16", "f16:f16:f16"};
}

void activation_spec::validate(const problem& p) const {
  validate_operands(p);
  const contract& c = p.dt;
  if (!is_float(c.src) || !is_float(c.dst) || !is_compute_type(c.acc) ||
      (c.rounds_inputs() && !is_compute_type(c.math)))
    throw error(fmt::format("{} does not support contract {} (floating-point src and dst, acc one "
                            "of f64 f32 f16 bf16)",
                            name(), c.types_string()));
}

fill_traits activation_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  fill_ranges r;
  // Large inputs up to 1000 reach exp overflow in f16 and f32 acc alike, never the storage max.
  r.large_scale = safe_magnitude(1000.0, 0.25, {p.dt.src, p.dt.dst, p.dt.acc});
  const fill_params params[] = {eltwise_fill_params(p.fill, r)};
  fill_inputs(in, params, seed);
  return eltwise_fill_traits(p.fill, exact_on_integers());
}

double activation_spec::reference_value(double x, const problem& p) const {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return at_infinity(x < 0, p);
  return exact(x, p);
}

double activation_spec::simulated_value(double x, const acc_steps& s, const problem& p) const {
  if (std::isnan(x)) return x;
  const double xa = s.load(x);  // may overflow when acc is narrower than src
  if (std::isinf(xa)) return at_infinity(xa < 0, p);
  return stepwise(xa, s, p);
}

void activation_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  map_elements(in[0], out[0], [&](double x) { return reference_value(x, p); });
}

void activation_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const acc_steps s(p.dt);
  map_elements(in[0], out[0], [&](double x) { return s.store(simulated_value(x, s, p)); });
}

std::vector<error_bound> activation_spec::bound(const problem& p, const fill_traits&, const bound_options&,
                                                std::span<const tensor> in,
                                                std::span<const tensor> ref) const {
  const acc_steps s(p.dt);
  const acc_error_model m(p.dt);
  const double lip = lipschitz(p);
  error_bound eb;
  eb.compute = map_bound(in[0], ref[0], [&](double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y)) return 0.0;
    const double xa = s.load(x);
    // x beyond acc's range: the kernel cannot represent its input; no claim.
    if (!std::isfinite(xa)) return std::numeric_limits<double>::infinity();
    return (eval_error(xa, m, p) + lip * std::fabs(xa - x)) * m.second_order();
  });
  eb.formula = fmt::format("{} + {}*|x_acc - x|, times (1+8u)(1+u_dst); {}; function ulps: exp {}, erf {}, tanh {}, div {}",
                           error_formula(p), lip, m.describe(), m.ulps().exp, m.ulps().erf, m.ulps().tanh,
                           m.ulps().div);
  std::vector<error_bound> v;
  v.push_back(std::move(eb));
  return v;
}

std::vector<std::string> activation_spec::suite(std::string_view tag) const {
  const bool smoke = tag == "smoke";
  if (!smoke && tag != "regression") return {};
  std::vector<std::string> lines;
  const auto cs = contracts();
  for (const auto& v : variants()) {
    const suite_axis axes[] = {{v}, unary_shapes(smoke), generic_fills(smoke, exact_on_integers()), contract_option_values(smoke, *this)};
    append(lines, covering_lines(name(), axes, cs));
  }
  return lines;
}

feature_table activation_spec::features() const {
  const named_axis axes[] = {{"variant", variants()},
                             {"shape", unary_shapes(false)},
                             {"fill", generic_fills(false, exact_on_integers())},
                             {"contract option", contract_option_values(false, *this)}};
  return axes_table(axes, contracts());
}

}  // namespace opval::ops::eltwise
