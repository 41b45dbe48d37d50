// cast: block-scaled quantize and dequantize (MX, NVFP4): reference, contract simulation and
// compute bounds. The block scales are a discrete function of the acc values (x * scale in
// acc), so the reference picks them as the contract does and is exact elsewhere.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "ops/cast/cast.hpp"

namespace opval::ops::cast {
namespace {

using eltwise::acc_error_model;

// The conversion of the elements (quantize) or of the dequantized values: MX elements always
// saturate (OCP MX v1.0 6.3); a dequantize follows cast's saturate as any conversion does.
converter converter_of(const problem& p, const block_format& f) {
  cast_params cp = params_of(p);
  if (f.quantize) cp.saturate = true;
  return converter(p.dt, cp);
}

// Quantize: per element the acc value v and its block's scale S.
struct quantized {
  std::vector<double> x, v, scales;
};

quantized quantize_inputs(const converter& cv, const block_format& f, const tensor& x) {
  quantized q;
  q.x = x.to_vector();
  q.v.resize(q.x.size());
  for (std::size_t i = 0; i < q.x.size(); ++i) q.v[i] = cv.acc_value(q.x[i]);
  q.scales = block_amax(f, q.v);
  for (double& s : q.scales) s = block_scale(f, s);
  return q;
}

// The scale of element i.
double scale_of(const std::vector<double>& scales, const block_format& f, std::size_t i) {
  return scales[i / static_cast<std::size_t>(f.block)];
}

// Dequantize: element value times its block's scale, exactly (at most 4 + 24 significant bits).
std::vector<double> dequantized(const block_format& f, std::span<const tensor> in) {
  std::vector<double> x = in[0].to_vector();
  const std::vector<double> s = in[1].to_vector();
  for (std::size_t i = 0; i < x.size(); ++i) x[i] *= scale_of(s, f, i);
  return x;
}

// An element v / S in E: exact (reference: x * scale / S clamped to +-max, unrounded) or as the
// contract computes it (round_E(v / S)); a NaN scale gives round_E(NaN).
double element(const converter& cv, const block_format& f, double x, double v, double s, bool exact) {
  if (!std::isfinite(s) || !exact || !std::isfinite(x)) return cv.to_dst(v / s);
  const double max = traits(f.element).max;
  return std::fmin(std::fmax(x * cv.scale / s, -max), max);
}

}  // namespace

void block_scaled(const problem& p, const block_format& f, bool exact, std::span<const tensor> in,
                  std::span<tensor> out) {
  const converter cv = converter_of(p, f);
  if (!f.quantize) {
    const std::vector<double> x = dequantized(f, in);
    eltwise::parallel_for(static_cast<std::int64_t>(x.size()), [&](std::int64_t i) {
      const double xi = x[static_cast<std::size_t>(i)];
      out[0].set_at(i, exact ? cv.reference(xi) : cv.to_dst(cv.acc_value(xi)));
    });
    return;
  }
  const quantized q = quantize_inputs(cv, f, in[0]);
  eltwise::parallel_for(static_cast<std::int64_t>(q.x.size()), [&](std::int64_t i) {
    const auto k = static_cast<std::size_t>(i);
    out[0].set_at(i, element(cv, f, q.x[k], q.v[k], scale_of(q.scales, f, k), exact));
  });
  for (std::size_t b = 0; b < q.scales.size(); ++b) out[1].set_at(static_cast<std::int64_t>(b), q.scales[b]);
}

std::vector<error_bound> block_scaled_bound(const problem& p, const block_format& f, std::span<const tensor> in,
                                            std::span<const tensor> ref) {
  const converter cv = converter_of(p, f);
  const acc_error_model m(p.dt);
  std::vector<error_bound> bounds;
  error_bound values;
  values.compute = tensor(dtype::f64, ref[0].shape());
  double* e = values.compute.data_as<double>();
  const double* r = ref[0].data_as<double>();
  if (!f.quantize) {
    const std::vector<double> x = dequantized(f, in);
    for (std::size_t i = 0; i < x.size(); ++i)
      e[i] = std::isfinite(x[i]) && std::isfinite(r[i]) ? acc_error(cv, m, x[i]) : 0.0;
    values.formula = fmt::format("cast's bound of x * x_scale (exact): {}", m.describe());
    bounds.push_back(std::move(values));
    return bounds;
  }
  // v / S: exact for a power-of-two S (MX); otherwise (NVFP4) a division, or a reciprocal and
  // a product (torchao, MSLK), in acc: two roundings at most before E's.
  const quantized q = quantize_inputs(cv, f, in[0]);
  const bool divides_exactly = f.scale_type == dtype::f8_e8m0;
  for (std::size_t i = 0; i < q.x.size(); ++i) {
    const double s = scale_of(q.scales, f, i);
    if (!std::isfinite(q.x[i]) || !std::isfinite(r[i]) || !std::isfinite(s)) {
      e[i] = 0.0;
      continue;
    }
    e[i] = acc_error(cv, m, q.x[i]) / s + (divides_exactly ? 0.0 : 2 * m.rounding(q.v[i] / s));
  }
  values.formula = fmt::format("(cast's bound of x * scale) / S{}; S exact; {}",
                               divides_exactly ? "" : " + 2u|v / S|", m.describe());
  bounds.push_back(std::move(values));
  error_bound scales;
  scales.compute = tensor(dtype::f64, ref[1].shape());
  double* zeros = scales.compute.data_as<double>();
  std::fill(zeros, zeros + scales.compute.numel(), 0.0);  // the scales are exact
  scales.formula = "0 (the block scales are exact)";
  bounds.push_back(std::move(scales));
  return bounds;
}

}  // namespace opval::ops::cast
