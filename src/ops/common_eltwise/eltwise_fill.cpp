#include "ops/common_eltwise/eltwise_fill.hpp"

#include <algorithm>
#include <string>

namespace opval::ops::eltwise {

fill_params eltwise_fill_params(std::string_view name, const fill_ranges& r) {
  fill_params f;
  f.kind = name == "default" ? fill_kind::normal : parse_fill_kind(name);
  f.scale = r.normal_scale;
  f.lo = r.uniform_lo;
  f.hi = r.uniform_hi;
  f.wide_exponents = r.wide_exponents;
  f.exact_range = 4;
  f.density = 0.7;
  f.special_rate = 0.05;  // enough NaN/Inf/-0/subnormals to matter in a few hundred elements
  if (f.kind == fill_kind::large) f.scale = r.large_scale;
  return f;
}

fill_traits eltwise_fill_traits(std::string_view name, bool exact_on_integers) {
  fill_traits t;
  const fill_kind k = name == "default" ? fill_kind::normal : parse_fill_kind(name);
  t.same_sign = k == fill_kind::positive;
  t.exact = exact_on_integers && k == fill_kind::exact;
  t.has_specials = k == fill_kind::special;
  return t;
}

void fill_inputs(std::span<tensor> in, std::span<const fill_params> params, std::uint64_t seed) {
  for (std::size_t i = 0; i < in.size(); ++i) fill_tensor(in[i], params[i], seed, i);
}

double safe_magnitude(double cap, double fraction, std::initializer_list<dtype> types) {
  double m = cap;
  for (dtype t : types) m = std::min(m, fraction * traits(t).max);
  return m;
}

}  // namespace opval::ops::eltwise
