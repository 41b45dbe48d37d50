#pragma once
// What a kernel promises about its arithmetic: input, math, accumulation, intermediate and
// output types, their rounding, denormal handling and elementary-function accuracy.
#include <string>
#include <string_view>

#include "opval/dtype.hpp"

namespace opval {

/// Subnormal handling of a kernel.
enum class denormals : std::uint8_t { ieee, ftz };

/// Accuracy a kernel claims for elementary functions, in ULPs of the type it evaluates them
/// in (the accumulation type). The defaults are CUDA's documented single-precision ones; the
/// "opencl" preset is OpenCL 1.2's full-profile float limits.
struct function_accuracy {
  double exp = 2.0;
  double erf = 2.0;
  double tanh = 2.0;
  double div = 0.5;
  double rsqrt = 2.0;
  double log = 1.0;
  bool operator==(const function_accuracy&) const = default;
};

/// A numeric contract. Text form: `src[xwei][@math]:acc:dst`, e.g. `bf16:f32:bf16`,
/// `f32@tf32:f32:f32` (f32 tensors rounded to tf32 inside the kernel), `u8xi8:i32:f32`;
/// a single type is shorthand (`f32`, `bf16` = bf16:f32:bf16, `tf32` = f32@tf32:f32:f32).
struct contract {
  dtype src = dtype::f32;   ///< storage type of the first input (A, activations, Q)
  dtype wei = dtype::f32;   ///< storage type of the second input (B, weights, K and V)
  dtype math = dtype::f32;  ///< type inputs are rounded to inside the kernel (= src if none)
  dtype acc = dtype::f32;   ///< accumulation type: products, sums, statistics
  dtype mid = dtype::f32;   ///< intermediate type (attention's P before P.V); = acc by default
  dtype dst = dtype::f32;   ///< output storage type
  rounding in_round = rounding::rne;   ///< of the in-kernel input rounding to `math`
  rounding acc_round = rounding::rne;  ///< of every accumulation step
  rounding dst_round = rounding::rne;  ///< of the final rounding to `dst`
  denormals denorm = denormals::ieee;
  function_accuracy ulps;
  /// False when the kernel may legitimately give different bits from run to run (atomics,
  /// dynamic scheduling): opval then does not require repeated runs to match bitwise.
  bool deterministic = true;

  bool operator==(const contract&) const = default;

  /// True when the kernel rounds its (higher-precision) inputs itself (tf32, f32 in bf16).
  bool rounds_inputs() const;
  /// `src[xwei][@math]:acc:dst` (the canonical `dt=` value).
  std::string types_string() const;
  /// The full canonical text: types plus every non-default option as ` key=value` pairs.
  std::string to_string() const;
};

/// Parses the `dt=` value; throws opval::error naming the bad part.
contract parse_contract_types(std::string_view text);
/// Applies one contract option (`dst_round`, `acc_round`, `in_round`, `mid`, `denorm`, `ulp`,
/// `deterministic`) to c. Returns false when `key` is not a contract option; throws on a bad value.
bool apply_contract_option(contract& c, std::string_view key, std::string_view value);

/// Every option of c not at its default as ` key=value` pairs, in the order of the descriptor
/// syntax (mid, in_round, acc_round, dst_round, denorm, ulp, deterministic); "" when all are
/// at their defaults (rne roundings, ieee denormals, mid = acc, cuda ulps, deterministic).
/// c.to_string() is `dt=` + c.types_string() + this.
std::string options_string(const contract& c);
/// Parses a whole contract, `types [key=value ...]` (an optional leading `dt=`, so that
/// to_string() reads back), as opval.Contract, the contracts a kernel declares and a plugin's
/// opval_problem.contract hold it: the types as parse_contract_types, then each option as
/// apply_contract_option (the descriptor parser reads the same parts token by token). Throws
/// opval::error naming an unknown or repeated option, or a word that is not key=value.
contract parse_contract(std::string_view text);

}  // namespace opval

namespace opval {

/// The rounding steps of a contract, for emulating it exactly (the sim backend) and for
/// tests that plant bugs. Each call rounds a double to the named type under the contract's
/// mode; with denorm=ftz, subnormal results flush to signed zero.
class contract_arith {
 public:
  explicit contract_arith(const contract& c);
  double input(double x) const;  ///< to `math` with in_round (identity when no rounding)
  double acc(double x) const;    ///< to `acc` with acc_round
  double mid(double x) const;    ///< to `mid` with acc_round
  double out(double x) const;    ///< to `dst` with dst_round (ieee overflow)
  /// acc(a*b + c) rounded once (a fused multiply-add in the accumulation type).
  double fma(double a, double b, double c) const;
  const contract& spec() const { return c_; }

 private:
  double flush(dtype t, double x) const;
  contract c_;
  bool acc_is_f32_rne_;
};

}  // namespace opval
