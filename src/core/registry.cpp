// Registration of ops and backends. Static registrars in each op's and backend's folder add
// themselves here at load time, so adding one touches no central file.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "opval/backend.hpp"
#include "core/backend_modules.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval {
namespace {

struct op_table {
  std::vector<std::unique_ptr<op_spec>> owned;
  std::vector<const op_spec*> views;
};

op_table& ops() {
  static op_table table;
  return table;
}

// The backends by name. Registrations arrive at load time and, from backend modules, later
// (inside dlopen): the table is read and written under its own lock, never held while a
// module loads.
struct backend_table {
  std::mutex lock;
  std::map<std::string, backend_factory> factories;
};

backend_table& backends() {
  static backend_table table;
  return table;
}

std::optional<backend_factory> registered(std::string_view name) {
  backend_table& t = backends();
  const std::lock_guard<std::mutex> hold(t.lock);
  const auto it = t.factories.find(std::string(name));
  if (it == t.factories.end()) return std::nullopt;
  return it->second;
}

template <class Names>
std::string joined(const Names& names) {
  return fmt::format("{}", fmt::join(names, " "));
}

}  // namespace

namespace detail {

op_registrar::op_registrar(std::unique_ptr<op_spec> spec) {
  auto& t = ops();
  t.views.push_back(spec.get());
  t.owned.push_back(std::move(spec));
  std::sort(t.views.begin(), t.views.end(),
            [](const op_spec* a, const op_spec* b) { return a->name() < b->name(); });
}

// The first registration of a name wins: a module cannot replace sim, or another module's backend.
backend_registrar::backend_registrar(std::string name, backend_factory factory) {
  backend_table& t = backends();
  const std::lock_guard<std::mutex> hold(t.lock);
  t.factories.emplace(std::move(name), factory);
}

}  // namespace detail

const std::vector<const op_spec*>& all_ops() { return ops().views; }

std::vector<tensor> allocate(const std::vector<operand>& operands, allocator& alloc) {
  std::vector<tensor> out;
  out.reserve(operands.size());
  for (const auto& o : operands) out.emplace_back(o.type, o.shape, o.lay, alloc);
  return out;
}

const op_spec& find_op(std::string_view name) {
  for (const op_spec* s : all_ops())
    if (s->name() == name) return *s;
  std::vector<std::string_view> names;
  for (const op_spec* s : all_ops()) names.push_back(s->name());
  throw error(fmt::format("unknown op '{}' (known: {})", name, joined(names)));
}

std::vector<std::string> backend_names() {
  detail::load_backend_modules();
  backend_table& t = backends();
  const std::lock_guard<std::mutex> hold(t.lock);
  std::vector<std::string> names;
  for (const auto& [name, factory] : t.factories) names.push_back(name);
  return names;
}

std::unique_ptr<backend> make_backend(std::string_view name) {
  // Registered already (sim, plugin, a module loaded before), else the module that holds it
  // (its own, or the one it is a variant of: onednn_winograd is onednn's), loaded alone.
  std::optional<backend_factory> factory = registered(name);
  if (!factory) {
    detail::load_module_of(name);
    factory = registered(name);
  }
  if (!factory) {
    if (const std::optional<std::string> why = detail::module_failure_of(name))
      throw error(fmt::format("backend '{}' is unavailable: its module {}", name, *why));
    throw error(fmt::format("unknown backend '{}' (known: {})", name, joined(backend_names())));
  }
  return (*factory)();
}


std::vector<located_problem> suite_problems(const std::string& tag, const std::vector<std::string>& op_filter) {
  std::vector<located_problem> out;
  for (const op_spec* spec : all_ops()) {
    if (!op_filter.empty() && std::find(op_filter.begin(), op_filter.end(), spec->name()) == op_filter.end())
      continue;
    int index = 0;
    for (const auto& line : spec->suite(tag)) {
      ++index;
      try {
        out.push_back({parse_problem(line), fmt::format("{} suite {} #{}", spec->name(), tag, index)});
      } catch (const error& e) {
        throw error(fmt::format("{} suite {} #{} ('{}'): {}", spec->name(), tag, index, line, e.what()));
      }
    }
  }
  for (const auto& name : op_filter) find_op(name);  // unknown names are bad input
  return out;
}

}  // namespace opval
