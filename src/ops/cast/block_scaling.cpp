// cast: block scales (OCP MX v1.0 section 6.3; NVFP4), see block_scaling.hpp.
#include "ops/cast/block_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "opval/problem.hpp"

namespace opval::ops::cast {
namespace {

bool is_wide(dtype t) { return t == dtype::f64 || t == dtype::f32 || t == dtype::f16 || t == dtype::bf16; }
bool is_element(dtype t) {
  return std::find(std::begin(block_elements), std::end(block_elements), t) != std::end(block_elements);
}

}  // namespace

std::optional<block_format> block_format_of(const problem& p) {
  const std::int64_t block = p.get_int("block");
  if (block == 0) return std::nullopt;
  block_format f;
  f.block = block;
  f.scale_type = parse_dtype(p.get_choice("block_scale"));
  const dtype src = p.dt.src, dst = p.dt.dst;
  f.quantize = is_wide(src) && is_element(dst);
  if (!f.quantize && !(is_element(src) && is_wide(dst)))
    throw error(fmt::format("block={} needs a cast between f64/f32/f16/bf16 and one of f8_e4m3 f8_e5m2 f6_e2m3 "
                            "f6_e3m2 f4_e2m1, not {}",
                            block, p.dt.types_string()));
  f.element = f.quantize ? dst : src;
  const dims& shape = p.get_dims("shape");
  if (shape.empty() || shape.back() % block != 0)
    throw error(fmt::format("block={} must divide the innermost extent of shape ({})", block,
                            shape.empty() ? std::string("a scalar has none") : std::to_string(shape.back())));
  return f;
}

dims scale_shape(dims shape, std::int64_t block) {
  shape.back() /= block;
  return shape;
}

double block_scale(const block_format& f, double amax) {
  if (std::isnan(amax)) return amax;
  const dtype_traits& e = traits(f.element);
  if (f.scale_type == dtype::f8_e8m0) {
    if (amax == 0.0) return 0x1p-127;
    const int emax = std::ilogb(e.max);
    return std::ldexp(1.0, std::clamp(std::ilogb(amax) - emax, -127, 127));
  }
  // NVFP4: amax / max_E in f64 (exact up to one rounding that cannot cross a midpoint of the
  // narrow scale type), rounded once to the scale type, and never below its smallest normal
  // (as torchao and NVIDIA's MSLK kernel: tiny blocks keep nonzero elements, none divides by 0).
  const dtype_traits& s = traits(f.scale_type);
  return std::max(round_to(f.scale_type, amax / e.max, rounding::rne, overflow::saturate), s.min_normal);
}

std::vector<double> block_amax(const block_format& f, const std::vector<double>& values) {
  std::vector<double> amax(values.size() / static_cast<std::size_t>(f.block), 0.0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    double& a = amax[i / static_cast<std::size_t>(f.block)];
    const double m = std::fabs(values[i]);
    if (!std::isfinite(m))
      a = std::numeric_limits<double>::quiet_NaN();
    else if (!std::isnan(a))
      a = std::max(a, m);
  }
  return amax;
}

}  // namespace opval::ops::cast
