// `opval list`: what a session can run, from the registries (opval/session.hpp).
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "opval/error.hpp"
#include "core/isolation.hpp"
#include "opval/op_spec.hpp"
#include "opval/policy.hpp"
#include "opval/session.hpp"

namespace opval {
namespace {

void list_attrs(const op_spec& op, std::ostream& out) {
  for (const attr_def& d : op.schema().defs()) {
    std::string detail(to_string(d.kind));
    if (d.kind == attr_kind::choice) detail += fmt::format(" {{{}}}", fmt::join(d.choices, ","));
    out << fmt::format("    {:<14} {:<10} {} [{}]\n", d.name, format_attr_value(d.default_value), d.doc, detail);
  }
  out << fmt::format("    fills: default {}\n", fmt::join(op.fills(), " "));
}

void list_ops(bool verbose, std::ostream& out) {
  for (const op_spec* op : all_ops()) {
    out << fmt::format("{:<16} {}\n", op->name(), op->summary());
    out << fmt::format("    contracts: {}\n", fmt::join(op->contracts(), " "));
    if (!verbose) continue;
    out << fmt::format("    contract options: deterministic {}\n", fmt::join(op->contract_options(), " "));
    list_attrs(*op, out);
  }
}

// The backend modules are loaded, and each backend made, in a worker process, as for a run:
// one whose construction crashes or hangs, or whose module cannot be loaded, is listed as
// unavailable, and the listing goes on.
void list_backends(std::ostream& out) {
  case_worker worker;
  const backend_catalog catalog = worker.catalog();
  for (const std::string& name : catalog.names) {
    std::string version;
    try {
      version = worker.describe({name, ""}).version;
    } catch (const std::exception& e) {
      version = std::string("unavailable: ") + e.what();
    }
    out << fmt::format("{:<16} {}\n", name, version) << std::flush;
  }
  for (const auto& [name, why] : catalog.unloadable) out << fmt::format("{:<16} unavailable: module {}\n", name, why);
}

void list_policies(std::ostream& out) {
  for (const policy_description& d : policy_descriptions()) out << fmt::format("{:<24} {}\n", d.syntax, d.meaning);
}

void list_suites(std::ostream& out) {
  out << fmt::format("{:<16} {:>6} {:>11}\n", "op", "smoke", "regression");
  for (const op_spec* op : all_ops())
    out << fmt::format("{:<16} {:>6} {:>11}\n", op->name(), op->suite("smoke").size(), op->suite("regression").size());
}

void list_contracts(std::ostream& out) {
  std::map<std::string, std::vector<std::string>> ops_of;
  for (const op_spec* op : all_ops())
    for (const std::string& c : op->contracts()) ops_of[c].emplace_back(op->name());
  for (const auto& [c, ops] : ops_of) out << fmt::format("{:<20} {}\n", c, fmt::join(ops, " "));
}

}  // namespace

void print_catalog(std::string_view what, bool verbose, std::ostream& out) {
  if (what == "ops") list_ops(verbose, out);
  else if (what == "backends") list_backends(out);
  else if (what == "policies") list_policies(out);
  else if (what == "suites") list_suites(out);
  else if (what == "contracts") list_contracts(out);
  else
    throw error(fmt::format("unknown list '{}' (known: ops backends policies suites contracts)", what));
}

}  // namespace opval
