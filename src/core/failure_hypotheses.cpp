#include "core/failure_hypotheses.hpp"

#include <cmath>

#include "core/error_model.hpp"

#include "opval/op_spec.hpp"

namespace opval {
namespace {

// |x - y| <= limit, NaN only with NaN and infinities equal.
bool close(double x, double y, double limit) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  return std::fabs(x - y) <= limit;
}

// The kernel and the hypothesis's simulation compute the same float steps (an epilogue) from
// the same hypothetical values, so they differ by those steps' rounding at the hypothesis's
// magnitude, which the case's bound, taken at the reference's, does not cover: up to 8
// roundings in the epilogue type (f32 or wider) and the output rounding, on both sides.
double rounding_at(const contract& c, double value) {
  const double epilogue = 8 * std::ldexp(1.0, -24) * std::fabs(value);
  return 2 * (epilogue + output_rounding_bound(c.dst, c.dst_round, c.denorm, value));
}

// Whether the hypothesis's outputs `predicted` explain `outs`.
bool explains(const contract& c, const std::vector<tensor>& predicted, const std::vector<tensor>& refs, const std::vector<tensor>& outs,
              const std::vector<const tensor*>& bounds) {
  bool predicts_a_failure = false;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const double* ref = refs[i].data_as<double>();
    const double* bound = bounds[i]->data_as<double>();
    for (std::int64_t e = 0; e < outs[i].numel(); ++e) {
      const double guess = predicted[i].at(e);
      if (!close(outs[i].at(e), guess, 2 * bound[e] + rounding_at(c, guess))) return false;
      predicts_a_failure = predicts_a_failure || !close(guess, ref[e], bound[e]);
    }
  }
  return predicts_a_failure;
}

}  // namespace

std::string matching_hypothesis(const problem& p, std::span<const tensor> ins, const std::vector<tensor>& refs,
                                const std::vector<tensor>& outs, const std::vector<const tensor*>& bounds) {
  for (const tensor* b : bounds)
    if (!b || b->empty()) return "";
  const op_spec& spec = p.spec();
  for (const kernel_hypothesis& h : spec.hypotheses(p)) {
    std::vector<tensor> predicted;
    for (const operand& o : spec.outputs(p)) predicted.emplace_back(o.type, o.shape, o.lay);
    h.simulate(p, ins, predicted);
    if (explains(p.dt, predicted, refs, outs, bounds)) return h.explanation;
  }
  return "";
}

}  // namespace opval
