// The MISTRUSTED perturbation check (core/perturbation.hpp).
#include "core/perturbation.hpp"

#include <cmath>

#include <fmt/format.h>

namespace opval::detail {

std::string perturbation_finding(const problem& p, backend& b, std::uint64_t seed, kernel_checks& kc,
                                 const std::vector<tensor>& ins, const std::vector<tensor>& outs,
                                 const std::vector<tensor>& refs, const std::vector<judgement>& js) {
  const op_spec& spec = p.spec();
  const int k = spec.perturbed_input(p);
  if (k < 0 || k >= static_cast<int>(ins.size())) return {};
  auto operands = spec.inputs(p);
  std::vector<tensor> fresh = kc.inputs(operands);
  const std::uint64_t other_seed = seed ^ 0x9e3779b97f4a7c15ull;
  spec.fill(p, other_seed, fresh);
  std::vector<tensor> mixed = ins;
  mixed[k] = fresh[k];
  std::vector<tensor> outs2 = kc.outputs(spec.outputs(p), 0);
  try {
    kc.run(b, mixed, outs2);
  } catch (const declined&) {
    return {};  // other inputs the kernel declines: no evidence either way, the verdict stands
  }
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (!outs[i].bitwise_equal(outs2[i])) return {};
  std::vector<tensor> refs2 = reference_tensors(spec.outputs(p));
  spec.reference(p, mixed, refs2);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const double* r1 = refs[i].data_as<double>();
    const double* r2 = refs2[i].data_as<double>();
    const double* bound = js[i].total.empty() ? nullptr : js[i].total.data_as<double>();
    for (std::int64_t e = 0, n = refs[i].numel(); e < n; ++e) {
      double slack = bound ? 2.0 * bound[e] : 0.0;
      if (std::fabs(r2[e] - r1[e]) > slack)
        return fmt::format("output is bitwise identical after input '{}' was re-filled (seed {}), "
                           "while the reference moved at {} from {:.9g} to {:.9g}",
                           operands[k].name, other_seed, format_index(refs[i].unravel(e)), r1[e], r2[e]);
    }
  }
  return {};
}

}  // namespace opval::detail
