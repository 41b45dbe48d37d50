#pragma once
// The activation functions in fp64, shared by the activation ops (relu, gelu, silu) and the
// GEMM epilogue: one definition of each, in the form that keeps full relative accuracy in
// double. Header-only, so an op may use it without building common_eltwise. Non-finite x:
// NaN propagates; at +-Inf these formulas may give NaN (-Inf * 0), so callers with IEEE
// semantics there handle infinities themselves.
#include <cmath>
#include <numbers>

namespace opval::ops::eltwise {

/// x < 0 ? +0 : x, as clamp_min(x, 0) and max-based kernels: NaN and -0 pass through.
inline double relu_exact(double x) { return x < 0 ? 0.0 : x; }

/// 0.5 x (1 + erf(x / sqrt2)), as 0.5 x erfc(-x / sqrt2): no cancellation for negative x.
inline double gelu_erf_exact(double x) { return 0.5 * x * std::erfc(-x * std::numbers::sqrt2 / 2); }

/// The constants of gelu's tanh approximation: sqrt(2/pi) and the cubic coefficient.
inline constexpr double sqrt_2_over_pi = 0.7978845608028654;
inline constexpr double gelu_kappa = 0.044715;

/// The argument z = sqrt(2/pi) (x + 0.044715 x^3) of gelu's tanh approximation.
inline double gelu_tanh_argument(double x) { return sqrt_2_over_pi * (x + gelu_kappa * x * x * x); }

/// 0.5 x (1 + tanh(z)), as the equal x / (1 + exp(-2z)): no cancellation for negative x.
inline double gelu_tanh_exact(double x) { return x / (1.0 + std::exp(-2.0 * gelu_tanh_argument(x))); }

/// x sigmoid(x) = x / (1 + exp(-x)).
inline double silu_exact(double x) { return x / (1.0 + std::exp(-x)); }

}  // namespace opval::ops::eltwise
