// Block scales (OCP MX v1.0 section 6.3; NVFP4), see block_scaling.hpp.
#include "ops/common_block/block_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace opval::ops::common_block {

bool is_block_element(dtype t) {
  return std::find(std::begin(block_elements), std::end(block_elements), t) != std::end(block_elements);
}

attr_def block_scale_attr() {
  return choice_attr("block_scale", "f8_e8m0", {"f8_e8m0", "f8_e4m3"},
                     "with block > 0: the scales' type, f8_e8m0 (OCP MX) or f8_e4m3 (NVFP4)");
}

double block_scale(const block_scaling& f, double amax) {
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

std::vector<double> block_amax(const block_scaling& f, std::span<const double> values) {
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

quantized_blocks quantize_blocks(const block_scaling& f, std::span<const double> values) {
  quantized_blocks q;
  q.scales = block_amax(f, values);
  for (double& s : q.scales) s = block_scale(f, s);
  q.elements.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    q.elements[i] = round_to(f.element, values[i] / q.scales[i / static_cast<std::size_t>(f.block)], rounding::rne,
                             overflow::saturate);
  return q;
}

}  // namespace opval::ops::common_block
