#pragma once
// Generated suites: an op's suite made inside what one kernel supports, from the op's feature
// table (op_spec::features). Every value of every feature runs alone on the base problem at each
// contract the kernel supports; then pairs of values are combined, greedily, until every pair the
// kernel supports is covered or the case budget is spent. What could not be covered is recorded
// with the reason (op_coverage). Deterministic for a seed. docs/COVERAGE.md.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/session.hpp"

namespace opval {

/// Asks the kernel under test whether it runs a problem (its supports(), wherever it lives).
using support_query = std::function<support(const problem&)>;

/// The suite of `op` for the kernel `supports` answers for, and what it covers. The contracts
/// are the table's, kept to those of `o.contracts` when given (as `--contract` selects).
generated_suite generate_suite(const op_spec& op, const support_query& supports, const generation_options& o);

}  // namespace opval
