#include "opval/policy.hpp"

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval {
namespace {

double parse_number(std::string_view key, std::string_view v) {
  std::string s(v);
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(x >= 0))
    throw error("policy parameter '" + std::string(key) + "' expects a non-negative number, got '" + s + "'");
  return x;
}

}  // namespace

std::string_view policy_name(policy_kind k) {
  switch (k) {
    case policy_kind::bound: return "bound";
    case policy_kind::relative_to_sim: return "relative-to-sim";
    case policy_kind::exact: return "exact";
    case policy_kind::fixed: return "fixed";
  }
  return "?";
}

std::string policy::to_string() const {
  // {} prints the shortest text that reads back to the same double.
  switch (kind) {
    case policy_kind::bound:
      return fmt::format("bound:false_alarm={}{}", false_alarm, random_data ? "" : ",random_data=0");
    case policy_kind::relative_to_sim: return fmt::format("relative-to-sim:m={}", sim_factor);
    case policy_kind::exact: return "exact";
    case policy_kind::fixed: return fmt::format("fixed:rtol={},atol={}", rtol, atol);
  }
  return "?";
}

policy parse_policy(std::string_view text) {
  policy p;
  std::string_view name = text.substr(0, text.find(':'));
  std::string_view params = name.size() < text.size() ? text.substr(name.size() + 1) : "";
  if (name == "bound") p.kind = policy_kind::bound;
  else if (name == "relative-to-sim") p.kind = policy_kind::relative_to_sim;
  else if (name == "exact") p.kind = policy_kind::exact;
  else if (name == "fixed") p.kind = policy_kind::fixed;
  else
    throw error("unknown policy '" + std::string(name) + "' (known: bound relative-to-sim exact fixed)");
  while (!params.empty()) {
    std::string_view item = params.substr(0, params.find(','));
    params = item.size() < params.size() ? params.substr(item.size() + 1) : "";
    std::size_t eq = item.find('=');
    if (eq == item.npos) throw error("policy parameter '" + std::string(item) + "' is not key=value");
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    double x = parse_number(key, value);
    auto out_of_range = [&](const char* range) {
      return error("policy parameter '" + std::string(item) + "' is out of range (" + range + ")");
    };
    if (key == "false_alarm" && p.kind == policy_kind::bound && !(x > 0 && x < 1)) throw out_of_range("0 < false_alarm < 1");
    if (key == "m" && p.kind == policy_kind::relative_to_sim && !(x >= 1)) throw out_of_range("m >= 1");
    if (key == "random_data" && p.kind == policy_kind::bound && x != 0 && x != 1) throw out_of_range("0 or 1");
    if (key == "false_alarm" && p.kind == policy_kind::bound) p.false_alarm = x;
    else if (key == "random_data" && p.kind == policy_kind::bound) p.random_data = x == 1;
    else if (key == "m" && p.kind == policy_kind::relative_to_sim) p.sim_factor = x;
    else if (key == "rtol" && p.kind == policy_kind::fixed) p.rtol = x;
    else if (key == "atol" && p.kind == policy_kind::fixed) p.atol = x;
    else throw error("policy " + std::string(name) + " takes no parameter '" + std::string(item) + "'");
  }
  return p;
}

}  // namespace opval
