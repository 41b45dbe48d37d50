#include "core/alternative_reference.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/backend_run.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval {

std::string alternative_reference::name() const {
  if (!impl) throw error("an alternative reference without an implementation");
  return fmt::format("{} ({})", impl->name(), float64 ? "float64" : "at the contract");
}

support reference_support(const alternative_reference& r, const problem& p) {
  support s = r.impl->supports(p);
  if (!s.ok) s.reason = fmt::format("the reference {} cannot compute this problem: {}", r.name(), s.reason);
  return s;
}

reference_values reference_outputs(const alternative_reference& r, const problem& p, std::span<const tensor> in) {
  const std::vector<operand> out_ops = p.spec().outputs(p);
  reference_values v;
  if (r.float64) {
    for (const operand& o : out_ops) v.outputs.emplace_back(dtype::f64, o.shape);
    v.rounded = run_backend(*r.impl, p, in, v.outputs).rounded_to_output;
    return v;
  }
  // At the contract: the backend's own output types and layouts, converted exactly to f64.
  std::vector<tensor> produced = allocate(out_ops);
  run_backend(*r.impl, p, in, produced);
  for (const tensor& t : produced) v.outputs.push_back(t.to(dtype::f64));
  v.rounded = true;
  return v;
}

reference_agreement compare_references(const std::string& output, const tensor& alt, const tensor& own,
                                       const tensor* bound, dtype ulp_type) {
  compare_input ci{.got = &alt, .expected = &own, .bound = bound, .ulp_type = ulp_type, .worst_k = 1,
                   .bias_test = false, .bias_skip_reason = "two references, not a kernel"};
  reference_agreement a;
  a.m = compare_outputs(ci);
  const metrics& m = a.m;
  a.agrees = m.nan_mismatch == 0 && m.inf_mismatch == 0 && m.beyond_bound == 0;
  a.text = fmt::format("output '{}': max |diff| {:.3g}", output, m.max_abs_error);
  if (bound) a.text += fmt::format(" ({:.3g} of the bound)", m.max_error_over_bound);
  if (m.beyond_bound) a.text += fmt::format(", {} of {} elements beyond the bound", m.beyond_bound, m.count);
  if (m.nan_mismatch) a.text += fmt::format(", {} NaN mismatches", m.nan_mismatch);
  if (m.inf_mismatch) a.text += fmt::format(", {} Inf mismatches", m.inf_mismatch);
  if (!a.agrees && !m.worst.empty()) {
    const worst_element& w = m.worst.front();
    a.text += fmt::format("; worst at [{}]: the reference gives {:.17g}, opval's {:.17g}",
                          fmt::join(w.index, ","), w.got, w.expected);
  }
  return a;
}

}  // namespace opval
