// cast: the fp64 reference (x * scale exactly, clamped or overflowed as dst says) and the
// contract-exact conversion (x * scale in acc, rounded to dst).
#include <cmath>

#include "ops/cast/cast.hpp"

namespace opval::ops::cast {
namespace {

overflow overflow_of(const contract& dt, const cast_params& cp) {
  return cp.saturate || !is_float(dt.dst) ? overflow::saturate : overflow::ieee;
}

}  // namespace

converter::converter(const problem& p) : converter(p.dt, params_of(p)) {}
converter::converter(const contract& dt, const cast_params& cp)
    : c(dt),
      s(dt),
      scale(cp.scale),
      scale_acc(s.constant(scale)),
      ovf(overflow_of(dt, cp)),
      inf_to_max(cp.saturate && cp.saturate_inf && is_float(dt.dst)) {}

double converter::acc_value(double x) const {
  const double xa = s.load(x);
  return scale == 1.0 ? xa : s.mul(xa, scale_acc);
}
double converter::to_dst(double v) const {
  if (inf_to_max && std::isinf(v)) return std::copysign(traits(c.dst).max, v);
  const double y = round_to(c.dst, v, c.dst_round, ovf);
  if (c.denorm == denormals::ftz && is_float(c.dst) && std::fabs(y) < traits(c.dst).min_normal)
    return std::copysign(0.0, y);
  return y;
}
double converter::reference(double x) const {
  if (std::isnan(x) || c.dst == dtype::boolean) return to_dst(acc_value(x));
  const double va = acc_value(x);
  if (!std::isfinite(va) || !std::isfinite(round_to(c.dst, va, c.dst_round, ovf))) return to_dst(va);
  // Finite in dst: beyond max only by less than the rounding threshold (or rz), or saturated.
  // lowest is f8_e8m0's least value 2^-127, where the values below it go.
  const double v = x * scale;
  if (v == 0.0) return round_to(c.dst, v);  // dst's zero of that sign (fnuz types have no -0)
  return std::fmin(std::fmax(v, traits(c.dst).lowest), traits(c.dst).max);
}

void cast_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  if (const auto f = block_format_of(p)) return block_scaled(p, *f, true, in, out);
  const converter cv(p);
  eltwise::map_elements(in[0], out[0], [&](double x) { return cv.reference(x); });
}

void cast_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  if (const auto f = block_format_of(p)) return block_scaled(p, *f, false, in, out);
  const converter cv(p);
  eltwise::map_elements(in[0], out[0], [&](double x) { return cv.to_dst(cv.acc_value(x)); });
}

}  // namespace opval::ops::cast
