#pragma once
// What matmul and conv2d share beyond the epilogue: their contracts, operand types, the
// fill policy, the contract-exact accumulation of the sim backend and the error constants.
// Both ops reduce a case to dot products of K terms followed by the epilogue.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "opval/error_model.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::common_gemm {

/// The contracts (canonical dt strings) of GEMM-like ops.
std::vector<std::string> gemm_contracts();
/// Throws "<op> does not support contract X (supported: ...)" unless c's types are listed.
void check_contract(std::string_view op, const contract& c);
/// Storage type of C, bias and residual: dst when it is a float, else f32.
dtype aux_type(const contract& c);

/// What an input of a GEMM-like op is, for the fill policy.
enum class operand_role : std::uint8_t { a, b, c, bias, residual, scale };

/// Fills inputs by role (input i uses stream i). A and B get the fill kind (int8 contracts:
/// integer values over the type's range by default); C, bias and residual get the same kind
/// scaled to the magnitude of the product so that every term matters; per-channel scales are
/// positive. `exact` picks a range r with K*r^2 exactly representable in the epilogue type.
fill_traits fill_gemm(const problem& p, const epilogue_spec& e, std::int64_t k,
                      std::span<const operand_role> roles, std::uint64_t seed, std::span<tensor> in);

/// Contract-exact accumulation of a row-major product: acc[i*n+j] = sum_p a[i*k+p]*b[p*n+j],
/// summed sequentially in p as the contract says (inputs rounded to `math` first; integer
/// contracts subtract the zero points and sum exactly). a and b hold the stored values.
void simulate_dot(const contract& c, const epilogue_spec& e, std::int64_t m, std::int64_t n,
                  std::int64_t k, std::span<const double> a, std::span<const double> b,
                  std::span<double> acc);

/// The constants of a case's error model and how its accumulation constant was chosen.
struct gemm_error_model {
  error_constants k;
  accumulation_gamma g;
};
/// K terms per dot product, `outputs` dot products in the case.
gemm_error_model make_error_model(const problem& p, const epilogue_spec& e, double k,
                                  double outputs, const fill_traits& f, const bound_options& o);

/// Effective batch/tile helpers: stored values with zero points removed (integer contracts).
std::vector<double> centered(std::vector<double> values, std::int64_t zp);

/// Suite helper: scale/zero-point attributes (leading space) that put outputs of an integer or
/// fp8 contract with K terms in a useful range (empty for float contracts).
std::string suite_quant_attrs(const contract& c, std::int64_t k);

}  // namespace opval::ops::common_gemm
