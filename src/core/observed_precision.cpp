// The observed precision: which float contract a result is consistent with.
#include "core/observed_precision.hpp"

#include <cmath>
#include <limits>

#include "core/error_model.hpp"

namespace opval {
namespace {

bool is_reducible(dtype t) { return t == dtype::f32 || t == dtype::bf16 || t == dtype::f16; }

// Precision of a type's significand, for ordering in-kernel roundings: a contract may only
// round inputs to a type no finer than they are stored in.
int significand_bits(dtype t) { return traits(t).precision; }

// True when every element of got lies within its bound of ref (NaN only where ref is NaN,
// infinities equal).
bool meets(const tensor& got, const tensor& ref, const error_bound& eb, const contract& c) {
  const std::vector<double> g = got.to_vector();
  const double* r = ref.data_as<double>();
  const double* comp = eb.compute.data_as<double>();
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(r[i]) || std::isnan(g[i])) {
      if (std::isnan(r[i]) != std::isnan(g[i])) return false;
      continue;
    }
    if (std::isinf(r[i]) || std::isinf(g[i])) {
      if (g[i] != r[i]) return false;
      continue;
    }
    if (std::fabs(g[i] - r[i]) > comp[i] + output_rounding_bound(c.dst, c.dst_round, c.denorm, r[i])) return false;
  }
  return true;
}

double bound_mass(const error_bound& eb) {
  double s = 0;
  const double* b = eb.compute.data_as<double>();
  for (std::int64_t i = 0, n = eb.compute.numel(); i < n; ++i)
    if (std::isfinite(b[i])) s += b[i];
  return s;
}

}  // namespace

std::vector<contract> precision_ladder(const contract& asked) {
  if (!is_reducible(asked.src) || !is_reducible(asked.wei) || !is_float(asked.dst) || asked.acc != dtype::f32)
    return {};
  std::vector<contract> ladder{asked};
  if (asked.math != asked.src && asked.src == asked.wei) {  // did it use the reduced precision it was allowed?
    contract c = asked;
    c.math = asked.src;
    ladder.push_back(c);
  }
  const int stored_bits = std::min(significand_bits(asked.src), significand_bits(asked.wei));
  for (dtype math : {dtype::tf32, dtype::f16, dtype::bf16}) {
    if (significand_bits(math) >= stored_bits || significand_bits(math) >= significand_bits(asked.math)) continue;
    contract c = asked;
    c.math = math;
    ladder.push_back(c);
  }
  for (dtype acc : {dtype::f16, dtype::bf16}) {
    contract c = asked;
    if (c.mid == c.acc) c.mid = acc;
    c.acc = acc;
    ladder.push_back(c);
  }
  return ladder;
}

std::optional<observed_precision> observe_precision(const problem& p, const fill_traits& ft, const bound_options& bo,
                                                    std::span<const tensor> ins, const std::vector<tensor>& refs,
                                                    const std::vector<tensor>& outs) {
  const std::vector<contract> ladder = precision_ladder(p.dt);
  if (ladder.size() < 2) return std::nullopt;
  std::string tried, best;
  double best_mass = std::numeric_limits<double>::infinity();
  for (const contract& c : ladder) {
    problem q = p;
    q.dt = c;
    std::vector<error_bound> bounds;
    try {
      bounds = p.spec().bound(q, ft, bo, ins, refs);
    } catch (const std::exception&) {
      continue;  // the op's error model has no meaning for this variant
    }
    if (bounds.size() != outs.size()) continue;
    bool all_met = true;
    double mass = 0;
    for (std::size_t i = 0; i < outs.size() && all_met; ++i) {
      all_met = bounds[i].meaningful && meets(outs[i], refs[i], bounds[i], c);
      mass += bound_mass(bounds[i]);
    }
    tried += (tried.empty() ? "" : ", ") + c.types_string();
    if (all_met && mass < best_mass) best_mass = mass, best = c.types_string();
  }
  observed_precision o;
  o.contract = best;
  if (best.empty())
    o.note = "within none of the bounds of " + tried;
  else if (best == p.dt.types_string())
    o.note = best + " (as asked; tried " + tried + ")";
  else
    o.note = best + " (the tightest bound met among " + tried + "; asked " + p.dt.types_string() + ")";
  return o;
}

}  // namespace opval
