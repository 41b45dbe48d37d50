#pragma once
// The tolerance policies (opval/policy.hpp names each and holds its parameters) as classes:
// how each output's per-element tolerance is made: bound (the op's error analysis; where it
// means nothing, relative-to-sim with a note), relative-to-sim, exact, fixed. Each carries its
// own description, which `opval list policies` prints (policy_descriptions).
#include <cstdint>
#include <memory>
#include <string>

#include "core/output_judging.hpp"

namespace opval::detail {

class tolerance_policy {
 public:
  virtual ~tolerance_policy() = default;
  /// The judgement (per-element tolerance, bias-test exemption, its text) of output `i`,
  /// named `output`.
  virtual judgement of(std::size_t i, const std::string& output) = 0;
  /// Whether the tolerance doubles against an alternative reference with the contract's
  /// rounding (whose own error adds to the kernel's); a user's tolerance (exact, fixed) is
  /// taken as given against it.
  virtual bool widens_for_reference() const { return true; }
};

/// The policy `p` for the case `in`, recording into `r` (its bound time, a fallback's note);
/// relative-to-sim takes its yardstick from `sim`. Throws opval::error when the op returns a
/// bound per output that does not match its outputs.
std::unique_ptr<tolerance_policy> make_tolerance_policy(const policy& p, const judging_input& in, case_result& r,
                                                        contract_emulation& sim);

/// A per-element f64 tensor from a function f(index, reference value).
template <class F>
tensor map_reference(const tensor& ref, F&& f) {
  tensor out(dtype::f64, ref.shape());
  const double* r = ref.data_as<double>();
  double* o = out.data_as<double>();
  const std::int64_t n = ref.numel();
#pragma omp parallel for schedule(static) if (n > 32768)
  for (std::int64_t i = 0; i < n; ++i) o[i] = f(i, r[i]);
  return out;
}

}  // namespace opval::detail
