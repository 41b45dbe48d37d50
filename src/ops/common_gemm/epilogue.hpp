#pragma once
// The epilogue shared by matmul and conv2d: dequantization scales, alpha/beta, bias,
// activation, residual add and integer output quantization, as one per-element formula
// with its fp64 reference, its contract-exact emulation and its error propagation.
//
// Order (oneDNN post-ops / cuBLASLt epilogues, and the one every value below follows):
//   s = sum_k (a - zp_a) * (b - zp_b)                  (float contracts: zp = 0)
//   z = alpha * scale_a * scale_b[ch] * s + beta * C + bias[ch]
//   y = act(z) + residual
//   dst = y                                             (float dst)
//   dst = saturate(round(y / scale_dst + zp_dst))       (integer dst)
// `ch` is the output channel: N for matmul, the output channel for conv2d.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error_model.hpp"

#include "opval/attr.hpp"
#include "opval/contract.hpp"
#include "opval/problem.hpp"

namespace opval::ops::common_gemm {

/// The fused activations real GEMM libraries ship.
enum class activation : std::uint8_t { none, relu, gelu, gelu_tanh, silu };

/// Parses an `act=` value (none relu gelu gelu_tanh silu); throws opval::error.
activation parse_activation(const std::string& name);
/// act(x) in fp64. gelu is the erf form, gelu_tanh the tanh approximation.
double apply_activation(activation a, double x);
/// Bound on |act'(x)| over all x: relu 1, gelu 1.13, gelu_tanh 1.13, silu 1.1.
double activation_lipschitz(activation a);

/// Everything the epilogue needs from a problem's attributes.
struct epilogue_spec {
  double alpha = 1, beta = 0;
  activation act = activation::none;
  bool has_bias = false, has_residual = false;
  double scale_a = 1, scale_b = 1;  ///< per-tensor dequantization scales
  bool per_channel = false;         ///< scale_b comes per channel from an input operand
  std::int64_t zp_a = 0, zp_b = 0;  ///< zero points of integer inputs
  double scale_dst = 1;             ///< integer dst: dst = y / scale_dst + zp_dst
  std::int64_t zp_dst = 0;
  bool integer_acc = false;         ///< exact integer accumulation (u8/i8 contracts)
  /// Block-scaled A and B (matmul's block > 0): elements per scale along k; the scales
  /// (A_scale, B_scale, of type block_scale) follow A and B among the inputs.
  std::int64_t block = 0;
  dtype block_scale = dtype::f8_e8m0;
  bool integer_dst = false;
};

/// An op's schema: its own attributes followed by the epilogue's, so both ops document the
/// epilogue identically. `with_beta` adds `beta` (matmul's C operand); conv2d's sum post-op is
/// `residual`.
attr_schema schema_with_epilogue(std::vector<attr_def> own, bool with_beta);

/// Reads the epilogue attributes of p (beta only when the op has it) and checks that they fit
/// the contract (zero points need integer inputs, scale_dst/zp_dst need an integer dst, ...).
epilogue_spec read_epilogue(const problem& p, bool has_beta);

/// The dequantization factor alpha * scale_a * scale_b[ch] in fp64.
inline double dequant_factor(const epilogue_spec& e, double scale_b_ch) {
  return e.alpha * e.scale_a * scale_b_ch;
}

/// The operand values one output element's epilogue reads (0 where absent).
struct epilogue_inputs {
  double scale_b = 1;  ///< scale_b of this element's channel (per tensor or per channel)
  double c = 0, bias = 0, residual = 0;
};

/// z = alpha * scale_a * scale_b[ch] * s + beta * C + bias: the value the activation gets.
double pre_activation(const epilogue_spec& e, double s, const epilogue_inputs& v);

/// fp64 epilogue on the exact dot product s; integer dst values are unrounded but clamped.
double epilogue_reference(const epilogue_spec& e, double s, const epilogue_inputs& v);

/// The same steps as a kernel of contract `c` performs them, each rounded to the epilogue
/// type (the float accumulation type; f32 after integer accumulation). `acc` is the
/// accumulator as the kernel holds it. Returns the value before the final rounding to dst.
double epilogue_simulate(const contract& c, const epilogue_spec& e, double acc,
                         const epilogue_inputs& v);

/// The type the epilogue computes in: the accumulation type when it is a float, else f32.
dtype epilogue_type(const contract& c);

/// Constants of the error model of one case (see epilogue_error).
struct error_constants {
  double gamma = 0;      ///< accumulation constant for K + extra steps (float acc)
  double rho_prod = 0;   ///< relative error of a product from in-kernel input rounding
  double eta = 0;        ///< underflow unit of the accumulation type
  double k_terms = 0;
  double u_epi = 0;      ///< unit roundoff of the epilogue type
  double gamma_epi = 0;  ///< deterministic gamma of the float steps after integer accumulation
  bool exact = false;    ///< the fill makes every step exact
  function_accuracy ulps;
  /// Random-sign fills: the K products' own accumulation (no epilogue steps), and
  /// gamma_det of the epilogue steps after it.
  std::optional<accumulation_gamma> products;
  double gamma_steps = 0;
};

/// The exact sums over the K products of one output: s = sum a b, sum |a||b|, sum a^2 b^2, and
/// `reach`, the absolute error of the products from inputs rounded below the held type's normal
/// range or flushed (input_absolute_error alpha of each operand): (1 + rho)(alpha_b sum|a| +
/// alpha_a sum|b|) + K alpha_a alpha_b.
struct dot_sums {
  double s = 0, abs = 0, square = 0, reach = 0;
};

/// Accumulation steps a kernel may take beyond the K products: alpha and scale products,
/// beta*C, C add, bias add (all folded into gamma_{K+extra}).
double extra_steps(const epilogue_spec& e);

/// The error bound of one element before the final rounding to dst, from its exact sums.
double epilogue_error(const epilogue_spec& e, const error_constants& k, const dot_sums& d, const epilogue_inputs& v);

/// A one-line description of the bound's formula for the verdict.
std::string epilogue_formula(const epilogue_spec& e, const error_constants& k,
                             const std::string& gamma_formula);

}  // namespace opval::ops::common_gemm
