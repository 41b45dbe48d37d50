#include "opval/session.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace opval {

namespace {

/// parse_problem and read_problem_file validate each problem, so an impossible shape is
/// reported here, before anything runs.
std::vector<located_problem> problems_from(const std::string& item, const std::string& inline_source) {
  if (!names_problem_file(item)) return {{parse_problem(item), inline_source}};
  if (std::error_code ec; std::filesystem::is_directory(item, ec))
    throw error("cannot read problem file '" + item + "': it is a directory");
  std::vector<located_problem> problems = read_problem_file(item);
  if (problems.empty()) throw error("problem file '" + item + "' holds no problem (only blank lines and comments)");
  return problems;
}

/// The canonical `dt=` strings asked for (so `bf16` selects bf16:f32:bf16).
std::set<std::string> canonical_contracts(const std::vector<std::string>& texts) {
  std::set<std::string> out;
  for (const std::string& t : texts) out.insert(parse_contract_types(t).types_string());
  return out;
}

}  // namespace

const std::vector<std::string>& suite_tags() {
  static const std::vector<std::string> tags = {"smoke", "regression", std::string(generated_tag)};
  return tags;
}

bool names_problem_file(const std::string& item) {
  if (std::error_code ec; std::filesystem::exists(item, ec)) return true;
  const bool one_word = item.find_first_of(" \t=") == std::string::npos;
  if (!one_word) return false;
  if (item.find_first_of("/.") != std::string::npos) return true;
  const auto& ops = all_ops();
  return std::none_of(ops.begin(), ops.end(), [&](const op_spec* s) { return s->name() == item; });
}

std::vector<located_problem> select_problems(const problem_selection& s) {
  for (const std::string& op : s.ops) find_op(op);  // an unknown op is an error, not a no-op
  if (s.tag.empty()) {  // a session plan's tag when none was given: smoke
    problem_selection smoke = s;
    smoke.tag = "smoke";
    return select_problems(smoke);
  }
  const auto& tags = suite_tags();
  if (std::find(tags.begin(), tags.end(), s.tag) == tags.end())
    throw error(fmt::format("unknown suite tag '{}' (known: {})", s.tag, fmt::join(tags, " ")));
  std::vector<located_problem> all;
  if (s.problems.empty() && s.tag == generated_tag)
    throw error("--tag generated makes a suite for the kernel under test: opval run, opval coverage and "
                "opval.check take it, other commands name their problems");
  if (s.problems.empty()) {
    all = suite_problems(s.tag, s.ops);
  } else {
    for (const std::string& item : s.problems) {
      std::vector<located_problem> more = problems_from(item, s.inline_source);
      all.insert(all.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
  }
  const std::set<std::string> contracts = canonical_contracts(s.contracts);
  std::erase_if(all, [&](const located_problem& lp) {
    const bool op_ok = s.ops.empty() || std::find(s.ops.begin(), s.ops.end(), lp.prob.op()) != s.ops.end();
    const bool dt_ok = contracts.empty() || contracts.contains(lp.prob.dt.types_string());
    return !op_ok || !dt_ok;
  });
  if (all.empty()) throw error("no problems selected: the filters (op, contract, tag) match none");
  return all;
}

bool any_case_ran(const run_summary& s) { return s.total() - s.skipped - s.unimplemented > 0; }

int run_exit_code(const run_summary& s) {
  const bool any_failure = s.failures() - s.known_failed > 0;
  return any_failure || !any_case_ran(s) ? 1 : 0;
}

}  // namespace opval
