// max_pool2d: the reference and the emulation are the same exact maximum over the window's
// taps inside the input (NaN wins, +0 over -0: common_reduce/reduction_numerics.hpp); the
// emulation stores it in dst, which is src's type, so it is exact too.
#include "ops/common_reduce/reduction_numerics.hpp"
#include "ops/max_pool2d/max_pool2d.hpp"

#include <limits>
#include <vector>

namespace opval::ops::max_pool2d {
namespace {

std::vector<double> window_maxima(const pool::window& g, const tensor& x) {
  return pool::pool_each(g, x.to_vector(), [](const pool::window_values& v) {
    double m = -std::numeric_limits<double>::infinity();
    for (double t : v.inside) m = reduce::max_of(m, t);
    return m;
  });
}

}  // namespace

void max_pool2d_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  out[0].assign(window_maxima(window_of(p), in[0]));
}

void max_pool2d_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  out[0].assign(window_maxima(window_of(p), in[0]), p.dt.dst_round);
}

}  // namespace opval::ops::max_pool2d
