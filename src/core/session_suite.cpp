// The generated suites of a session (opval/session.hpp, generate_session_suite): each op's suite
// for each backend under test, made from the backend's supports() answers where its cases run.
#include <set>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/session.hpp"
#include "core/suite_generator.hpp"

namespace opval {

session_suite generate_session_suite(const problem_selection& s, const std::vector<session_backend>& backends,
                                     case_executor& executor, std::uint64_t seed) {
  std::vector<const op_spec*> ops;
  for (const std::string& name : s.ops) ops.push_back(&find_op(name));
  if (ops.empty()) ops = all_ops();
  const generation_options o{.seed = seed, .budget = s.suite_budget, .contracts = s.contracts};
  session_suite out;
  std::set<std::string> seen;
  for (const op_spec* op : ops)
    for (const session_backend& sb : backends) {
      generated_suite g = generate_suite(*op, [&](const problem& p) { return executor.supports(sb, p); }, o);
      g.coverage.backend = sb.b->name();
      for (located_problem& lp : g.problems)
        if (seen.insert(lp.prob.to_string()).second) out.problems.push_back(std::move(lp));
      out.coverage.push_back(std::move(g.coverage));
    }
  return out;
}

}  // namespace opval
