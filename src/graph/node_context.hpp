#pragma once
// One node as the graph reference runs it: its inputs' values and typed access to its
// attributes, with errors that name the node, its op type and the part at fault.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opval/graph.hpp"

namespace opval::graph {

class node_context {
 public:
  node_context(const model& m, const node& n, std::vector<const value*> inputs);

  const model& graph() const { return m_; }
  const node& current() const { return n_; }
  std::int64_t opset() const { return m_.opset; }

  /// How many inputs the node names (omitted trailing ones excluded).
  std::size_t input_count() const { return in_.size(); }
  /// Input i; a missing (omitted or absent) input is an error naming `what` it is.
  const value& input(std::size_t i, std::string_view what) const;
  /// Input i, or nullptr when omitted.
  const value* optional_input(std::size_t i) const;
  /// True when the node asks for output i (it names it).
  bool wants_output(std::size_t i) const;

  bool has(std::string_view name) const;
  std::int64_t integer(std::string_view name, std::int64_t fallback) const;
  std::optional<std::int64_t> integer(std::string_view name) const;
  double real(std::string_view name, double fallback) const;
  std::string text(std::string_view name, std::string fallback) const;
  std::optional<std::vector<std::int64_t>> integers(std::string_view name) const;
  std::optional<std::vector<double>> reals(std::string_view name) const;
  const value* tensor(std::string_view name) const;

  /// An opval::error naming the node and its op type, followed by `what`.
  [[noreturn]] void fail(std::string_view what) const;
  /// A graph::unsupported error naming the node, its op type and the form opval does not map.
  [[noreturn]] void unsupported_form(std::string_view what) const;
  /// The node's axis attribute value `axis` for a rank-`rank` input, normalized; out of range
  /// is an error.
  int axis(std::int64_t axis, int rank, std::string_view name = "axis") const;

 private:
  const attribute* find(std::string_view name, attribute::kind k) const;

  const model& m_;
  const node& n_;
  std::vector<const value*> in_;
};

}  // namespace opval::graph
