#pragma once
// Activations y = f(x) (relu, gelu, silu, tanh): everything but the function itself. An op supplies
// f in fp64, f as a kernel of the contract computes it step by step, a bound on that kernel's
// error, a Lipschitz constant and its cost; this base does validation, fill, reference,
// simulation, the bound tensor and the suites.
//
// Semantics shared by all activations: f(NaN) = NaN; f(+-Inf) is the limit of f (so gelu and
// silu of -Inf are -0, not the NaN that 0.5*x*(1+erf(x/sqrt2)) evaluates to); the reference
// is f on the exact stored input.
#include <string>
#include <vector>

#include "ops/common_eltwise/unary_spec.hpp"

namespace opval::ops::eltwise {

/// Base of the activations.
class activation_spec : public unary_spec {
 public:
  /// f32, bf16:f32:bf16, f16:f32:f16 and f16:f16:f16 (computed in f16).
  std::vector<std::string> contracts() const override;
  void validate(const problem& p) const override;
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  /// compute bound = (error(x_acc) + L |x_acc - x|) * (1 + 8u)(1 + u_dst), where x_acc is x
  /// as the kernel holds it (rounded to math and acc), eval_error() the op's bound on its
  /// evaluation in acc and L its Lipschitz constant. 0 where x or f(x) is not finite.
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// The variants, the unary shapes and layouts, the generic fills and the contract options.
  feature_table features() const override;

 protected:
  /// f(x) in fp64 for finite x.
  virtual double exact(double x, const problem& p) const = 0;
  /// The limit of f at -Inf (negative) or +Inf.
  virtual double at_infinity(bool negative, const problem& p) const = 0;
  /// f as the contract's kernel computes it from x (finite, already in acc): each step in
  /// acc, elementary functions correctly rounded.
  virtual double stepwise(double x, const acc_steps& s, const problem& p) const = 0;
  /// A bound on |kernel(x) - f(x)| for finite x in acc, before the rounding to dst.
  virtual double eval_error(double x, const acc_error_model& m, const problem& p) const = 0;
  /// sup |f'|: propagates the rounding of inputs into acc.
  virtual double lipschitz(const problem& p) const = 0;
  /// How error() is derived, for the verdict.
  virtual std::string error_formula(const problem& p) const = 0;
  /// True when f maps small integers to themselves exactly (relu).
  virtual bool exact_on_integers() const { return false; }
  /// Values of the op's own attributes the suites cover, e.g. {"approximate=none",
  /// "approximate=tanh"}; each is crossed with every shape, fill and contract.
  virtual std::vector<std::string> variants() const { return {""}; }

 private:
  double reference_value(double x, const problem& p) const;
  double simulated_value(double x, const acc_steps& s, const problem& p) const;
};

}  // namespace opval::ops::eltwise
