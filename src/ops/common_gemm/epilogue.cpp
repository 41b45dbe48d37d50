#include "ops/common_gemm/epilogue.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ops/common_eltwise/activations.hpp"
#include "opval/error.hpp"
#include "core/error_model.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::common_gemm {
namespace {

constexpr const char* activation_names[] = {"none", "relu", "gelu", "gelu_tanh", "silu"};

bool is_integer(dtype t) { return !is_float(t); }

// Absolute error of evaluating the activation in the epilogue type, for |z| <= za and
// |act(z)| <= ya. Each form assumes the textbook evaluation with elementary functions
// accurate to the contract's ULPs (one ULP <= 2u relative):
//   gelu       0.5 z (1 + erf(z / sqrt 2)): erf error (<= ulps*2u absolute, |erf| <= 1), the
//              rounding of z/sqrt2 (through erf' <= 1.13) and of 1 + erf (u on a value <= 2)
//              scaled by 0.5|z|; the final product rounds once (u |y|).
//   gelu_tanh  as gelu with tanh, plus the 4 roundings of sqrt(2/pi)(z + 0.044715 z^3),
//              whose terms share a sign (tanh'(w)|w| <= 0.45).
//   silu       z / (1 + exp(-z)): relative errors of exp (shrunk by e/(1+e) <= 1), of the
//              add, of the division and of an optional z*sigmoid product.
double activation_eval_error(activation a, double za, double ya, const function_accuracy& ulps,
                             double u) {
  switch (a) {
    case activation::none:
    case activation::relu: return 0.0;
    case activation::gelu: return (ulps.erf + 2.0) * u * za + 2.0 * u * ya;
    case activation::gelu_tanh: return (ulps.tanh + 4.0) * u * za + 2.0 * u * ya;
    case activation::silu: return (2.0 * ulps.exp + 2.0 * ulps.div + 4.0) * u * ya;
  }
  return 0.0;
}

double round_epi(dtype t, rounding r, double x) { return t == dtype::f64 ? x : round_to(t, x, r); }

}  // namespace

activation parse_activation(const std::string& name) {
  for (int i = 0; i < 5; ++i)
    if (name == activation_names[i]) return static_cast<activation>(i);
  throw error("act=" + name + " is not an activation (none relu gelu gelu_tanh silu)");
}

double apply_activation(activation a, double x) {
  switch (a) {
    case activation::none: return x;
    case activation::relu: return eltwise::relu_exact(x);
    case activation::gelu: return eltwise::gelu_erf_exact(x);
    case activation::gelu_tanh: return eltwise::gelu_tanh_exact(x);
    case activation::silu: return eltwise::silu_exact(x);
  }
  return x;
}

double activation_lipschitz(activation a) {
  switch (a) {
    case activation::none:
    case activation::relu: return 1.0;
    case activation::gelu:
    case activation::gelu_tanh: return 1.13;  // max of Phi(x) + x phi(x), at x = sqrt 2
    case activation::silu: return 1.1;        // max of s(x)(1 + x(1 - s(x))) = 1.0998
  }
  return 1.0;
}

attr_schema schema_with_epilogue(std::vector<attr_def> own, bool with_beta) {
  own.push_back(real_attr("alpha", 1.0, "multiplies the product (and the dequantization scales)"));
  if (with_beta) own.push_back(real_attr("beta", 0.0, "multiplies the input C (an operand when beta != 0)"));
  own.push_back(bool_attr("bias", false, "adds a per-channel bias operand before the activation"));
  own.push_back(choice_attr("act", "none", {"none", "relu", "gelu", "gelu_tanh", "silu"},
                            "activation after bias (gelu = erf form)"));
  own.push_back(bool_attr("residual", false, "adds a residual operand after the activation"));
  own.push_back(real_attr("scale_a", 1.0, "dequantization scale of the first input"));
  own.push_back(real_attr("scale_b", 1.0,
                          "dequantization scale of the second input (per_channel: multiplies the scale operand)"));
  own.push_back(choice_attr("scale_b_mode", "per_tensor", {"per_tensor", "per_channel"},
                            "per_channel: scales per output channel come as the input operand scale_b"));
  own.push_back(int_attr("zp_a", 0, "zero point of the first input (integer contracts)", -128, 255));
  own.push_back(int_attr("zp_b", 0, "zero point of the second input (integer contracts)", -128, 255));
  own.push_back(real_attr("scale_dst", 1.0, "integer dst: dst = y / scale_dst + zp_dst"));
  own.push_back(int_attr("zp_dst", 0, "integer dst: zero point of the output", -2147483648.0, 2147483647.0));
  return attr_schema(std::move(own));
}

epilogue_spec read_epilogue(const problem& p, bool has_beta) {
  epilogue_spec e;
  e.alpha = p.get_real("alpha");
  e.beta = has_beta ? p.get_real("beta") : 0.0;
  e.act = parse_activation(p.get_choice("act"));
  e.has_bias = p.get_bool("bias");
  e.has_residual = p.get_bool("residual");
  e.scale_a = p.get_real("scale_a");
  e.scale_b = p.get_real("scale_b");
  e.per_channel = p.get_choice("scale_b_mode") == "per_channel";
  e.zp_a = p.get_int("zp_a");
  e.zp_b = p.get_int("zp_b");
  e.scale_dst = p.get_real("scale_dst");
  e.zp_dst = p.get_int("zp_dst");
  e.integer_acc = is_integer(p.dt.acc);
  e.integer_dst = is_integer(p.dt.dst);
  if (p.spec().schema().find("block")) {  // matmul's block scaling; conv2d has none
    e.block = p.get_int("block");
    e.block_scale = parse_dtype(p.get_choice("block_scale"));
  }
  auto in_range = [](dtype t, std::int64_t v) {
    return static_cast<double>(v) >= traits(t).lowest && static_cast<double>(v) <= traits(t).max;
  };
  if (!e.integer_acc && (e.zp_a != 0 || e.zp_b != 0))
    throw error("zp_a / zp_b need an integer contract (e.g. dt=u8xi8:i32:f32), not " + p.dt.types_string());
  if (e.integer_acc && !in_range(p.dt.src, e.zp_a))
    throw error("zp_a=" + std::to_string(e.zp_a) + " is outside the range of " + std::string(to_string(p.dt.src)));
  if (e.integer_acc && !in_range(p.dt.wei, e.zp_b))
    throw error("zp_b=" + std::to_string(e.zp_b) + " is outside the range of " + std::string(to_string(p.dt.wei)));
  if (!e.integer_dst && (e.scale_dst != 1.0 || e.zp_dst != 0))
    throw error("scale_dst / zp_dst need an integer dst type (dt=...:i8, :u8 or :i32)");
  if (!(e.scale_dst != 0.0) || !std::isfinite(e.scale_dst)) throw error("scale_dst must be finite and nonzero");
  for (double s : {e.alpha, e.beta, e.scale_a, e.scale_b})
    if (!std::isfinite(s)) throw error("alpha, beta, scale_a and scale_b must be finite");
  return e;
}

dtype epilogue_type(const contract& c) { return is_float(c.acc) ? c.acc : dtype::f32; }

// z = alpha * scales * s + beta * C + bias: the value the activation receives.
double pre_activation(const epilogue_spec& e, double s, const epilogue_inputs& v) {
  double z = dequant_factor(e, v.scale_b) * s;
  if (e.beta != 0.0) z += e.beta * v.c;
  if (e.has_bias) z += v.bias;
  return z;
}

double epilogue_reference(const epilogue_spec& e, double s, const epilogue_inputs& v) {
  double y = apply_activation(e.act, pre_activation(e, s, v));
  if (e.has_residual) y += v.residual;
  if (!e.integer_dst) return y;
  return y / e.scale_dst + static_cast<double>(e.zp_dst);
}

double epilogue_simulate(const contract& c, const epilogue_spec& e, double acc,
                         const epilogue_inputs& v) {
  const dtype t = epilogue_type(c);
  const rounding r = e.integer_acc ? rounding::rne : c.acc_round;
  auto rd = [&](double x) { return round_epi(t, r, x); };
  double z = e.integer_acc ? rd(acc) : acc;  // the i32 -> f32 conversion
  if (e.alpha != 1.0 || e.scale_a != 1.0 || v.scale_b != 1.0) {
    // Kernels fold the scales into one factor computed once per channel.
    const double factor = rd(rd(e.alpha * e.scale_a) * v.scale_b);
    z = rd(factor * z);
  }
  if (e.beta != 0.0) z = rd(z + rd(e.beta * v.c));
  if (e.has_bias) z = rd(z + v.bias);
  if (e.act != activation::none) z = rd(apply_activation(e.act, z));
  if (e.has_residual) z = rd(z + v.residual);
  if (e.integer_dst) {
    if (e.scale_dst != 1.0) z = rd(z / e.scale_dst);
    if (e.zp_dst != 0) z = rd(z + static_cast<double>(e.zp_dst));
  }
  return z;
}

double extra_steps(const epilogue_spec& e) {
  double n = 0;
  if (e.alpha != 1.0) n += 1;
  if (e.scale_a != 1.0) n += 1;
  if (e.scale_b != 1.0 || e.per_channel) n += 1;
  if (e.beta != 0.0) n += 2;
  if (e.has_bias) n += 1;
  return n;
}

namespace {

// The error of z before the activation under float accumulation: the K products and the
// epilogue steps as one sum (any order), or for random-sign fills the products' own sum,
// then the steps after it, whichever bound is smaller (both hold).
double float_accumulation_error(const error_constants& k, const dot_sums& d, double f, double side) {
  const double underflow = (std::abs(f) * (k.k_terms + 1.0) + 3.0) * k.eta + (1.0 + k.gamma) * std::abs(f) * d.reach;
  const double as_one_sum = ((1.0 + k.gamma) * (1.0 + k.rho_prod) - 1.0) * std::abs(f) * d.abs;
  if (!k.products) return as_one_sum + k.gamma * side + underflow;
  // Products rounded to `math` scale every |t| by at most 1 + rho and keep their signs.
  const double products = (1.0 + k.rho_prod) * k.products->sum_error(d.abs, d.square) + k.rho_prod * d.abs;
  const double steps = k.gamma_steps * std::abs(f) * (std::abs(d.s) + products);
  return std::min(as_one_sum, std::abs(f) * products + steps) + k.gamma * side + underflow;
}

}  // namespace

double epilogue_error(const epilogue_spec& e, const error_constants& k, const dot_sums& d, const epilogue_inputs& v) {
  const bool act_exact = e.act == activation::none || e.act == activation::relu;
  if (k.exact && act_exact) return 0.0;
  const double f = dequant_factor(e, v.scale_b);
  const double side = std::abs(e.beta * v.c) + std::abs(v.bias);
  const double s = d.s;
  double ez;
  if (k.exact) {
    ez = 0.0;
  } else if (e.integer_acc) {
    ez = k.gamma_epi * (std::abs(f * s) + side) + 3.0 * k.eta;
  } else {
    ez = float_accumulation_error(k, d, f, side);
  }
  const double z = pre_activation(e, s, v);
  const double act_z = apply_activation(e.act, z);
  double err = ez, y = std::abs(act_z);
  if (e.act != activation::none) {
    const double lip = activation_lipschitz(e.act);
    err = lip * ez + activation_eval_error(e.act, std::abs(z) + ez, y + lip * ez, k.ulps, k.u_epi);
  }
  if (e.has_residual) {
    y = std::abs(act_z + v.residual);
    err += k.u_epi * (y + err);  // the rounding of the add
  }
  if (e.integer_dst) {
    const double q = (y + err) / std::abs(e.scale_dst);
    err = err / std::abs(e.scale_dst) + k.u_epi * q + k.u_epi * (q + std::abs(double(e.zp_dst)));
  }
  return err;
}

std::string epilogue_formula(const epilogue_spec& e, const error_constants& k,
                             const std::string& gamma_formula) {
  if (k.exact) return "exact: integer-valued fill, every step exact";
  std::string f = e.integer_acc
                      ? "exact integer sum; float steps gamma_det(" + std::to_string(k.gamma_epi) +
                            ")*(|scale*s| + |beta C| + |bias|)"
                      : "((1+g)(1+rho)-1)*|alpha*scales|*sum|a||b| + g*(|beta C| + |bias|) + (K+1)*eta, g=" +
                            gamma_formula + ", rho=" + std::to_string(k.rho_prod);
  if (k.products && !e.integer_acc && !k.exact)
    f += "; random signs: the products' part at most |alpha*scales|*((1+rho)*min(g*sum|a||b|, " +
         fmt::format("{:.3g}*sqrt(sum a^2 b^2) + {:.3g}*sum|a||b|) + rho*sum|a||b|), then gamma_det(steps)={:.3g} "
                     "on |alpha*scales*s|",
                     k.products->root, k.products->linear, k.gamma_steps);
  if (e.act != activation::none)
    f += "; then " + std::string(activation_names[static_cast<int>(e.act)]) +
         ": L*E + eval error (ulps from the contract)";
  if (e.has_residual) f += "; + u*|y| for the residual add";
  if (e.integer_dst) f += "; / scale_dst + zp_dst";
  return f;
}

}  // namespace opval::ops::common_gemm
