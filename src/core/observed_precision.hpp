#pragma once
// The observed precision of a result: the tightest of a ladder of float contracts around the
// one asked whose error bound every output element meets. It tells a kernel that failed
// *how* it computed (e.g. "meets f32@tf32: inputs were rounded to tf32"), and a kernel that
// was allowed a reduced precision whether it used it.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval {

/// What observe_precision found.
struct observed_precision {
  std::string contract;  ///< types string of the tightest contract met; empty when none
  std::string note;      ///< one line for the report
};

/// The contracts tried for p: the asked one, without its in-kernel input rounding (if any),
/// with inputs rounded in-kernel to tf32 / f16 / bf16, and with f16 / bf16 accumulation. Empty for non-float contracts.
std::vector<contract> precision_ladder(const contract& asked);

/// Among precision_ladder(p.dt), the one whose bound is smallest (summed over elements) while
/// every element of `outs` lies within it; nullopt when the ladder does not apply to p.
std::optional<observed_precision> observe_precision(const problem& p, const fill_traits& ft, const bound_options& bo,
                                                    std::span<const tensor> ins, const std::vector<tensor>& refs,
                                                    const std::vector<tensor>& outs);

}  // namespace opval
