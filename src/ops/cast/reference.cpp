// cast: the fp64 reference (x * scale exactly, clamped or overflowed as dst says) and the
// contract-exact conversion (x * scale in acc, rounded to dst).
#include <cmath>
#include <limits>

#include "ops/cast/cast.hpp"

namespace opval::ops::cast {
namespace {

overflow overflow_of(const contract& dt, const cast_params& cp) {
  return cp.saturate || !is_float(dt.dst) ? overflow::saturate : overflow::ieee;
}

}  // namespace

double round_e8m0(double v, e8m0_rounding m, overflow o) {
  const dtype e8m0 = dtype::f8_e8m0;
  if (m == e8m0_rounding::nearest) return round_to(e8m0, v, rounding::rne, o);
  const double below = round_to(e8m0, v, rounding::rz, o);
  // up as down for powers of two, values below 2^-127 (below = 2^-127 > v), NaN, Inf, zero
  // and negatives; else the next power, 2^128 being beyond e8m0's range.
  if (m == e8m0_rounding::down || !std::isfinite(v) || !(below < v)) return below;
  if (below < traits(e8m0).max) return 2 * below;
  return o == overflow::saturate ? below : std::numeric_limits<double>::quiet_NaN();
}

converter::converter(const problem& p) : converter(p.dt, params_of(p)) {}
converter::converter(const contract& dt, const cast_params& cp)
    : c(dt),
      s(dt),
      scale(cp.scale),
      scale_acc(s.constant(scale)),
      ovf(overflow_of(dt, cp)),
      inf_to_max(cp.saturate && cp.saturate_inf && is_float(dt.dst)),
      e8m0_round(cp.e8m0_round) {}

bool converter::directed() const { return c.dst == dtype::f8_e8m0 && e8m0_round != e8m0_rounding::nearest; }

double converter::acc_value(double x) const {
  const double xa = s.load(x);
  return scale == 1.0 ? xa : s.mul(xa, scale_acc);
}
double converter::rounded(double v) const {
  return directed() ? round_e8m0(v, e8m0_round, ovf) : round_to(c.dst, v, c.dst_round, ovf);
}
double converter::to_dst(double v) const {
  if (inf_to_max && std::isinf(v)) return std::copysign(traits(c.dst).max, v);
  const double y = rounded(v);
  if (c.denorm == denormals::ftz && is_float(c.dst) && std::fabs(y) < traits(c.dst).min_normal)
    return std::copysign(0.0, y);
  return y;
}
double converter::reference(double x) const {
  if (std::isnan(x) || c.dst == dtype::boolean) return to_dst(acc_value(x));
  const double va = acc_value(x);
  if (!std::isfinite(va) || !std::isfinite(rounded(va))) return to_dst(va);
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
