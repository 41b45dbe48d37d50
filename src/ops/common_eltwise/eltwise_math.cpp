#include "ops/common_eltwise/eltwise_math.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error_model.hpp"

namespace opval::ops::eltwise {

acc_error_model::acc_error_model(const contract& c) : c_(c) {
  const auto& tr = traits(c.acc);
  u_ = unit_roundoff(c.acc, c.acc_round);
  eps_ = tr.epsilon;
  // Gradual underflow loses at most one subnormal spacing; flush-to-zero up to min_normal.
  uf_ = underflow_unit(c.acc, c.denorm);
  // A division claimed to k ulps is within k*eps relative; a directed rounding of a
  // correctly rounded quotient is still within one rounding.
  div_rel_ = std::max(c.ulps.div * eps_, u_);
  max_ = tr.max;
  const double u_dst = is_float(c.dst) ? unit_roundoff(c.dst, c.dst_round) : 0.0;
  second_order_ = (1 + 8 * u_) * (1 + u_dst);
}

double acc_error_model::rounding(double v) const { return u_ * std::fabs(v) + uf_; }

double acc_error_model::function(double v, double k) const {
  const double a = std::fabs(v);
  const double one = ulp(c_.acc, a);
  return k * ulp(c_.acc, a + k * one) + uf_;
}

double acc_error_model::half_one_plus_gate(double g, double k) const {
  return 0.5 * (function(g, k) + u_ * (1 + std::fabs(g)) + uf_);
}

double acc_error_model::sigmoid_gate(double s, double k) const {
  const double e = std::exp(-s);
  const double sigma = 1.0 / (1.0 + e);
  // Within k ulps (relative 2k*eps) of max, the kernel's exp or 1 + exp may be infinite (a
  // zero gate) or, rounding toward zero, max (a gate of 1/max).
  if (!(e * (1 + 4 * k * eps_) + 1 < max_)) return sigma + 2 / max_ + uf_;
  return sigma * (sigma * function(e, k) + u_ + div_rel_) + 2 * uf_;
}

std::string acc_error_model::describe() const {
  return fmt::format("u=2^{} ({}{})", static_cast<int>(std::log2(u_)), to_string(c_.acc),
                     c_.acc_round == rounding::rz ? ", rz" : "");
}

}  // namespace opval::ops::eltwise
