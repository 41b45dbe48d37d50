#pragma once
// The memory budget of a case (docs/SAFETY.md, "Huge problems"): its peak estimated from the
// operands' shapes before anything is allocated, so that a problem too big for the machine is
// SKIPPED with "needs 40.0 GB, budget 11.7 GB" instead of growing a worker until the kernel
// of the OOM killer ends it, or failing an allocation as if the kernel were wrong.
#include <optional>
#include <string>

#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::detail {

/// Bytes a case holds at its peak: the kernel's inputs and outputs (a second set of outputs for
/// the poisoned run, one more for the perturbation or thread-count runs), the fp64 copies
/// the reference and the comparison make of them, the reference, bound and compute bound per
/// output element. Guard regions are address space, not memory, and are not counted.
double case_peak_bytes(const problem& p, const run_options& o);

/// The budget of one case in bytes: o.max_memory_gb, or when it is 0 half of the memory
/// available now (MemAvailable), which leaves the rest to the parent, other workers and the
/// system. nullopt when neither is known (no /proc/meminfo): no limit.
std::optional<double> case_memory_budget(const run_options& o);

/// "needs 40.0 GB, budget 11.7 GB (inputs 0.0 GB, outputs 40.0 GB, ...)" when the case's
/// peak exceeds its budget; nullopt when it fits.
std::optional<std::string> over_memory_budget(const problem& p, const run_options& o);

}  // namespace opval::detail
