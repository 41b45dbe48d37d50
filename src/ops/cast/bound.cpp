// cast: error model.
//
// Error model: the compute bound is the error of the acc value before the rounding to dst:
//   |x_acc - x| |s_acc| + |x| |s_acc - scale| + (scale != 1 ? u|x_acc s_acc| : 0) + underflow,
// 0 for a plain conversion whose src fits in acc; the runner adds the dst rounding.
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "ops/cast/cast.hpp"

namespace opval::ops::cast {

using eltwise::acc_error_model;

double acc_error(const converter& cv, const acc_error_model& m, double x) {
  const double xa = cv.s.load(x), sa = cv.scale_acc;
  double e = std::fabs(xa - x) * std::fabs(sa) + std::fabs(x) * std::fabs(sa - cv.scale);
  if (cv.scale != 1.0) e += m.rounding(xa * sa);
  return e * m.second_order();
}

std::vector<error_bound> cast_spec::bound(const problem& p, const fill_traits&, const bound_options&,
                                          std::span<const tensor> in, std::span<const tensor> ref) const {
  if (const auto f = block_format_of(p)) return block_scaled_bound(p, *f, in, ref);
  const converter cv(p);
  const acc_error_model m(p.dt);
  const double scale = cv.scale, sa = cv.scale_acc;
  error_bound eb;
  eb.compute = eltwise::map_bound(in[0], ref[0], [&](double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y) || p.dt.dst == dtype::boolean) return 0.0;
    return acc_error(cv, m, x);
  });
  eb.formula = fmt::format("|x_acc - x||s_acc| + |x||s_acc - scale| + u|x_acc s_acc| (scale={}, s_acc={}); {}",
                           scale, sa, m.describe());
  if (cv.directed()) {  // a power of two above (below) the value: up to one ulp away, not half
    eb.directed_rounding = true;
    eb.formula += fmt::format("; e8m0_round={}", p.get_choice("e8m0_round"));
  }
  std::vector<error_bound> v;
  v.push_back(std::move(eb));
  return v;
}

}  // namespace opval::ops::cast
