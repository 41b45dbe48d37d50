// Typed access to one node's inputs and attributes, for the structural ops and the op nodes.
#include "graph/node_context.hpp"

#include <fmt/format.h>

#include "graph/graph_value.hpp"
#include "opval/error.hpp"

namespace opval::graph {
namespace {

std::string_view kind_name(attribute::kind k) {
  switch (k) {
    case attribute::kind::integer: return "an integer";
    case attribute::kind::real: return "a float";
    case attribute::kind::text: return "a string";
    case attribute::kind::tensor: return "a tensor";
    case attribute::kind::integers: return "a list of integers";
    case attribute::kind::reals: return "a list of floats";
    case attribute::kind::texts: return "a list of strings";
    case attribute::kind::other: break;
  }
  return "something else";
}

}  // namespace

node_context::node_context(const model& m, const node& n, std::vector<const value*> inputs)
    : m_(m), n_(n), in_(std::move(inputs)) {
  while (!in_.empty() && in_.back() == nullptr) in_.pop_back();
}

void node_context::fail(std::string_view what) const {
  throw error(fmt::format("node '{}' ({}): {}", n_.name, n_.op_type, what));
}

void node_context::unsupported_form(std::string_view what) const {
  throw unsupported(fmt::format("node '{}' ({}): {}", n_.name, n_.op_type, what));
}

const value& node_context::input(std::size_t i, std::string_view what) const {
  if (i >= in_.size() || in_[i] == nullptr) fail(fmt::format("input {} ({}) is missing", i, what));
  return *in_[i];
}

const value* node_context::optional_input(std::size_t i) const { return i < in_.size() ? in_[i] : nullptr; }

bool node_context::wants_output(std::size_t i) const {
  return i < n_.outputs.size() && !n_.outputs[i].empty();
}

bool node_context::has(std::string_view name) const { return n_.attrs.contains(name); }

const attribute* node_context::find(std::string_view name, attribute::kind k) const {
  const auto it = n_.attrs.find(name);
  if (it == n_.attrs.end()) return nullptr;
  if (it->second.k != k)
    fail(fmt::format("attribute '{}' is {}, not {}", name,
                     it->second.k == attribute::kind::other ? it->second.other : kind_name(it->second.k), kind_name(k)));
  return &it->second;
}

std::optional<std::int64_t> node_context::integer(std::string_view name) const {
  const attribute* a = find(name, attribute::kind::integer);
  return a ? std::optional(a->i) : std::nullopt;
}

std::int64_t node_context::integer(std::string_view name, std::int64_t fallback) const {
  return integer(name).value_or(fallback);
}

double node_context::real(std::string_view name, double fallback) const {
  const attribute* a = find(name, attribute::kind::real);
  return a ? a->f : fallback;
}

std::string node_context::text(std::string_view name, std::string fallback) const {
  const attribute* a = find(name, attribute::kind::text);
  return a ? a->s : fallback;
}

std::optional<std::vector<std::int64_t>> node_context::integers(std::string_view name) const {
  const attribute* a = find(name, attribute::kind::integers);
  return a ? std::optional(a->ints) : std::nullopt;
}

std::optional<std::vector<double>> node_context::reals(std::string_view name) const {
  const attribute* a = find(name, attribute::kind::reals);
  return a ? std::optional(a->reals) : std::nullopt;
}

const value* node_context::tensor(std::string_view name) const {
  const attribute* a = find(name, attribute::kind::tensor);
  return a ? a->t.get() : nullptr;
}

int node_context::axis(std::int64_t axis, int rank, std::string_view name) const {
  const std::optional<int> a = normalized_axis(axis, rank);
  if (!a) fail(fmt::format("{}={} is outside [{}, {}) for an input of rank {}", name, axis, -rank, rank, rank));
  return *a;
}

}  // namespace opval::graph
