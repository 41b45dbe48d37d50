#pragma once
// What matmul and conv2d share beyond the epilogue: their contracts, operand types, the
// fill policy, the contract-exact accumulation of the sim backend and the error constants.
// Both ops reduce a case to dot products of K terms followed by the epilogue.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "core/error_model.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::common_gemm {

/// The contracts (canonical dt strings) of GEMM-like ops.
std::vector<std::string> gemm_contracts();
/// Throws "<op> does not support contract X (supported: ...)" unless c's types are listed.
void check_contract(std::string_view op, const contract& c);
/// The block-scaled contracts listed for matmul (block > 0): MXFP8, MXFP6, MXFP4 and NVFP4
/// elements, f32 accumulation. is_block_scaled_contract accepts more: any two element types of
/// common_block::block_elements, acc f32, dst f32, bf16 or f16.
std::vector<std::string> block_scaled_contracts();
/// Whether c's types are those of a block-scaled GEMM (as block_scaled_contracts says).
bool is_block_scaled_contract(const contract& c);
/// Whether c is block-scaled only: an element type other than fp8 (which is also a per-tensor
/// scaled contract).
bool requires_block(const contract& c);
/// Throws one error naming what is wrong with p's block scaling (`block`, `block_scale`) for
/// K = k: block > 0 needs a block-scaled contract and must divide k; a block-scaled contract
/// needs block > 0.
void check_block_scaling(const problem& p, const epilogue_spec& e, std::int64_t k);
/// A GEMM-like op's feature table: `base` and the op's own `shape_features`, then the epilogue's
/// (epilogue_features), at every GEMM contract; its rules add the quantization scales a contract
/// needs (suite_quant_attrs at the problem's K, from `k_of`) and say which fills an integer
/// contract can be judged on.
feature_table gemm_feature_table(std::string base, std::vector<suite_feature> shape_features, bool with_beta,
                                 std::function<std::int64_t(const problem&)> k_of);

/// Storage type of C, bias and residual: dst when it is a float, else f32.
dtype aux_type(const contract& c);

/// What an input of a GEMM-like op is, for the fill policy.
enum class operand_role : std::uint8_t { a, b, a_scale, b_scale, c, bias, residual, scale };

/// Input indices of the optional operands after A and B (-1 when absent): A_scale and B_scale
/// (block > 0), C (beta != 0), bias, residual, per-channel scale_b, in that order.
struct operand_slots {
  int a_scale = -1, b_scale = -1, c = -1, bias = -1, residual = -1, scale = -1;
};
/// Where e's optional operands are among the inputs.
operand_slots slots_of(const epilogue_spec& e);
/// The fill role of each of the `n_inputs` inputs: A, B, then e's optional operands.
std::vector<operand_role> roles_of(const epilogue_spec& e, std::size_t n_inputs);

/// Whether K products of zero-point-centered integer inputs can overflow the i32
/// accumulator (false for float contracts).
bool i32_may_overflow(const contract& c, const epilogue_spec& e, double k);

/// Which sums of the K products the fp64 passes compute: the dot product itself, or for the
/// error model sum|a||b| (magnitudes), sum a^2 b^2 (squares, the random-sign bound's), and
/// sum|a| and sum|b| over the same K terms (first_magnitudes, second_magnitudes: the other
/// operand read as ones), which the absolute part of the inputs' rounding scales.
enum class dot_values : std::uint8_t { signed_values, magnitudes, squares, first_magnitudes, second_magnitudes };

/// The values of a GEMM operand as the exact dot products use them: zero point removed, then
/// as `v` asks (magnitudes or squares for the error model's sums; ones for the operand that
/// first_magnitudes or second_magnitudes does not name). `first`: the first operand (A, src).
std::vector<double> dot_operand(const tensor& t, std::int64_t zp, dot_values v, bool first);
/// The same on values already read (logical row-major).
std::vector<double> dot_operand(std::vector<double> values, std::int64_t zp, dot_values v, bool first);

/// op_counts of problem p of op s: `flops`, and the bytes of every operand.
op_counts gemm_counts(const op_spec& s, const problem& p, double flops);

/// The epilogue operand values (C, bias, residual, per-channel scale) of an output element.
/// The channel (index into bias and scale_b) of output `linear` is (linear / inner) % channels.
class epilogue_reader {
 public:
  epilogue_reader(const epilogue_spec& e, std::span<const tensor> in, std::int64_t inner, std::int64_t channels);
  epilogue_inputs at(std::int64_t linear) const;

 private:
  const epilogue_spec& e_;
  std::int64_t inner_, channels_;
  std::vector<double> c_, bias_, residual_, scale_;
};

/// The fp64 epilogue of every exact dot product, in place (integer dst saturates: that is
/// part of its meaning).
void epilogue_reference_all(const contract& c, const epilogue_spec& e, const epilogue_reader& rd,
                            std::vector<double>& dots);
/// The contract-exact epilogue of every accumulator, in place (before the final rounding).
void epilogue_simulate_all(const contract& c, const epilogue_spec& e, const epilogue_reader& rd,
                           std::vector<double>& acc);

/// Fills inputs by role (input i uses stream i). A and B get the fill kind (int8 contracts:
/// integer values over the type's range by default); C, bias and residual get the same kind
/// scaled to the magnitude of the product so that every term matters; per-channel scales are
/// positive. `exact` picks a range r with K*r^2 exactly representable in the epilogue type.
/// Block-scaled A and B (e.block > 0) are quantized from wide values of the fill kind, their
/// scales vary from block to block (fill_block_scaled, block_scaled_operands.hpp).
fill_traits fill_gemm(const problem& p, const epilogue_spec& e, std::int64_t k,
                      std::span<const operand_role> roles, std::uint64_t seed, std::span<tensor> in);

/// Contract-exact accumulation of a row-major product: acc[i*n+j] = sum_p a[i*k+p]*b[p*n+j],
/// summed sequentially in p as the contract says (inputs rounded to `math` first; integer
/// contracts subtract the zero points and sum exactly). a and b hold the stored values.
void simulate_dot(const contract& c, const epilogue_spec& e, std::int64_t m, std::int64_t n,
                  std::int64_t k, std::span<const double> a, std::span<const double> b,
                  std::span<double> acc);

/// i32 accumulation as x86 does it without VNNI (vpmaddubsw, then vpmaddwd): A taken as u8 (s8
/// shifted by 128), B as s8; each pair of consecutive products (k = 2i, 2i+1) summed in int16
/// with saturation, the pair sums in i32; the shift and the zero points compensated exactly
/// from the row and column sums, as oneDNN and ONNX Runtime's MLAS do.
void dot_int_saturating_pairs(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const double> a,
                              std::span<const double> b, bool a_signed, std::int64_t zp_a, std::int64_t zp_b,
                              std::span<double> acc);

/// The constants of a case's error model and how its accumulation constant was chosen.
struct gemm_error_model {
  error_constants k;
  accumulation_gamma g;
};
/// K terms per dot product, `outputs` dot products in the case.
gemm_error_model make_error_model(const problem& p, const epilogue_spec& e, double k,
                                  double outputs, const fill_traits& f, const bound_options& o);

/// The compute bound of a GEMM-like op with output shape `shape` and K terms per dot
/// product, from the exact dot products of the stored values (`exact_dots(signed_values)`),
/// of their magnitudes and, for random-sign fills, of their squares (neither needed for
/// integer accumulation).
///
/// Derivation (docs/NUMERICS.md, "matmul and conv2d"), per output element, for
/// s = sum_k (a_k - zp_a)(b_k - zp_b) exact, f = alpha*scale_a*scale_b[ch], u_epi and eta the
/// unit roundoff and underflow unit of the epilogue type (epilogue_error, epilogue.cpp):
///  - float accumulation: the K products and extra_steps(e) epilogue steps (alpha, scale_a,
///    scale_b, beta*C and its add, bias) form one inner product in acc, so Higham's bound for
///    any summation order (blocked, tiled, split-K, pairwise, with or without FMA) gives
///      |z^ - z| <= ((1+g)(1+rho) - 1) |f| sum_k |a_k||b_k| + g (|beta C| + |bias|) + (|f|(K+1) + 3) eta
///    g = accumulation_constant(K + extra): gamma_det, or Higham & Mary's probabilistic
///    constant with lambda from a union bound over the case's outputs at the policy's
///    false-alarm rate (gamma_det for same-sign fills and rz accumulation); rho =
///    (1+r_a)(1+r_b) - 1 for inputs the kernel rounds to `math` (tf32, f32@bf16), else 0.
///    For random-sign fills (fill_traits::random_signs) the K products' part g |f| sum|a||b|
///    is also at most |f| (root sqrt(sum a^2 b^2) + linear sum|a||b|) (random_sign_constants),
///    the epilogue steps after it then bounded apart: gamma_det(extra) |f| (|s| + that).
///  - integer accumulation (u8/i8 x i8 -> i32) is exact (validate rejects K that can
///    overflow i32); only the float steps round: gamma_det(steps) (|f s| + |beta C| + |bias|)
///    + 3 eta, steps = 4 (conversion, scales, multiply) + 2 (beta) + 1 (bias).
///  - a fused activation turns an error E in z into L E + its evaluation error (L its
///    Lipschitz constant, the evaluation from the contract's ulp claims); the residual add
///    adds u_epi (|y| + err); an integer dst divides by |scale_dst| and adds the two roundings
///    of the requantization.
///  - an exact fill (integer values, power-of-two scales, no activation but relu) gives 0.
/// Where (K + extra) u_acc >= 0.5 no bound means anything: the bound is marked not
/// meaningful (the runner judges relative-to-sim). `ref` is the op's fp64 reference output:
/// under an identity epilogue it *is* the exact dot products, which then cost no fp64 GEMM.
error_bound gemm_bound(const problem& p, const epilogue_spec& e, double k, const dims& shape, const fill_traits& f,
                       const bound_options& o, const epilogue_reader& rd,
                       const std::function<std::vector<double>(dot_values)>& exact_dots, const tensor& ref);

/// Whether the epilogue leaves the dot product as it is: y = s (alpha, the scales 1, no C,
/// bias, activation, residual or integer dst).
bool identity_epilogue(const epilogue_spec& e);

/// dot_sums::reach of one output from the sums of |a| and |b| over its K terms, for inputs whose
/// storage or rounding loses up to alpha_a and alpha_b absolutely (input_absolute_error):
/// (1 + rho)(alpha_b sum|a| + alpha_a sum|b|) + K alpha_a alpha_b.
double product_reach(double alpha_a, double alpha_b, double rho, double k, double sum_abs_a, double sum_abs_b);

/// Effective batch/tile helpers: stored values with zero points removed (integer contracts).
std::vector<double> centered(std::vector<double> values, std::int64_t zp);

/// Suite helper: scale/zero-point attributes (leading space) that put outputs of an integer or
/// fp8 contract with K terms in a useful range (empty for float contracts).
std::string suite_quant_attrs(const contract& c, std::int64_t k);

/// For each output batch element (row-major over `out_batch`), the element offset of t's
/// matrix; t's batch dims broadcast against out_batch NumPy-style (right-aligned, extents of
/// 1 stretch). Backends that loop over batches of a library GEMM use it.
std::vector<std::int64_t> batch_offsets(const dims& out_batch, const tensor& t);
/// The same for an operand given by its shape and element strides (before it has data).
std::vector<std::int64_t> batch_offsets(const dims& out_batch, const dims& shape, const dims& strides);

/// The matmul feature a plain `alpha*op(A)*op(B) + beta*C` kernel cannot express (bias,
/// activation, residual, quantization), named for an UNIMPLEMENTED reason; empty if none.
std::string non_gemm_feature(const problem& p, const epilogue_spec& e);

}  // namespace opval::ops::common_gemm
