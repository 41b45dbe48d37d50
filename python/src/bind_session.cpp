// The session's option table (opval/session.hpp) in Python: the keywords of opval.run,
// opval.check and opval.judge, their defaults and help, and RunOptions made from keywords
// through the same fields the CLI sets.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "opval/error.hpp"
#include "opval/session.hpp"

namespace opval::python {
namespace {

constexpr const char* stage_name(option_stage s) {
  switch (s) {
    case option_stage::selection: return "selection";
    case option_stage::backends: return "backends";
    case option_stage::per_case: return "per_case";
    case option_stage::session: return "session";
    case option_stage::bench: return "bench";
  }
  return "?";
}

std::vector<std::string> names_of_bits(unsigned bits, const std::vector<std::pair<unsigned, const char*>>& names) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : names)
    if (bits & bit) out.emplace_back(name);
  return out;
}

/// The default of an option as Python sees it: the value a keyword takes (a negated flag's
/// keyword is the field itself: perturb=True).
nb::object default_of(const option_def& d) {
  session_plan plan;
  return std::visit(
      [&]<class T>(plan_field<T> field) -> nb::object {
        const T& value = field(plan);
        if constexpr (std::is_same_v<T, policy>) return nb::str("bound");
        else if constexpr (std::is_same_v<T, guard_side>) return nb::bool_(value == guard_side::before);
        else return nb::cast(value);
      },
      d.field);
}

template <class T>
constexpr const char* kind_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, int>) return "int";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, double>) return "float";
  else if constexpr (std::is_same_v<T, std::string>) return "str";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return "list[str]";
  else if constexpr (std::is_same_v<T, std::vector<int>>) return "list[int]";
  else if constexpr (std::is_same_v<T, policy>) return "policy";
  else return "guard_side";
}

nb::dict describe(const option_def& d) {
  nb::dict out;
  out["flag"] = std::string(d.flag);
  out["keyword"] = std::string(d.keyword);
  out["value_name"] = std::string(d.value_name);
  out["help"] = std::string(d.help);
  out["stage"] = stage_name(d.stage);
  out["commands"] = names_of_bits(d.commands, {{for_run, "run"}, {for_repro, "repro"}, {for_bench, "bench"}, {for_judge, "judge"}});
  out["python"] = names_of_bits(d.python, {{in_opval_run, "run"}, {in_opval_check, "check"}, {in_opval_judge, "judge"}});
  out["default"] = default_of(d);
  out["kind"] = std::visit([]<class T>(plan_field<T>) { return kind_name<T>(); }, d.field);
  out["negated"] = d.negated;
  out["choices"] = std::string(d.choices);
  out["delimiter"] = d.delimiter ? std::string(1, d.delimiter) : std::string();
  return out;
}

void set_keyword(session_plan& plan, const option_def& d, nb::handle value) {
  std::visit(
      [&]<class T>(plan_field<T> field) {
        T& target = field(plan);
        if constexpr (std::is_same_v<T, policy>) target = parse_policy(nb::cast<std::string>(value));
        else if constexpr (std::is_same_v<T, guard_side>) target = nb::cast<bool>(value) ? guard_side::before : guard_side::after;
        else target = nb::cast<T>(value);
      },
      d.field);
}

/// RunOptions from per-case keywords (policy, seed, worst, the checks); another keyword is a
/// ValueError naming it. The reference is the caller's to set (a Backend object, in Python).
run_options run_options_from(const nb::dict& keywords) {
  session_plan plan;
  for (const auto& [key, value] : keywords) {
    const std::string name = nb::cast<std::string>(key);
    const auto& table = session_option_table();
    const auto d = std::find_if(table.begin(), table.end(), [&](const option_def& o) {
      return o.stage == option_stage::per_case && o.keyword == name;
    });
    if (d == table.end()) throw error(fmt::format("unknown case option '{}'", name));
    try {
      set_keyword(plan, *d, value);
    } catch (const nb::cast_error&) {
      throw error(fmt::format("option {}: cannot take {}", name, nb::cast<std::string>(nb::repr(value))));
    }
  }
  return plan.run;
}

}  // namespace

void bind_session(nb::module_& m) {
  m.def("session_options", [] {
    nb::list out;
    for (const option_def& d : session_option_table()) out.append(describe(d));
    return out;
  }, "every option of a session, as the CLI and the Python layer take it: flag, keyword, value_name, help, stage, "
     "commands, python (the functions taking the keyword), default, kind (its value's type), negated, choices, delimiter");
  m.def("run_options", &run_options_from, nb::arg("keywords"),
        "RunOptions from the per-case keywords (policy, seed, worst, perturb, guard, guard_before, poison, "
        "input_check, threads, leak_check), set as the CLI sets its options");
}

}  // namespace opval::python
