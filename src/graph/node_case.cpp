// A graph node as an op-level case (opval/graph.hpp's case_of_node): the reproducer of a node
// that fails alone, replayed by `opval judge` as a regression test.
#include <algorithm>

#include <fmt/format.h>

#include "graph/graph_value.hpp"
#include "graph/node_context.hpp"
#include "graph/op_nodes.hpp"
#include "opval/graph.hpp"
#include "opval/op_spec.hpp"

namespace opval::graph {
namespace {

// v shaped as operand o (the same elements, row-major), an error naming `what` when the counts differ.
value as_operand(const operand& o, value v, const node& n, std::string_view what) {
  if (static_cast<std::int64_t>(v.data.size()) != element_count(o.shape))
    throw error(fmt::format("node '{}': {} has {} elements, the problem's operand '{}' {}", n.name, what, v.data.size(),
                            o.name, to_string(o.shape)));
  v.shape = o.shape;
  v.type = o.type;
  return v;
}

}  // namespace

node_case case_of_node(const model& m, std::string_view name, const std::map<std::string, value, std::less<>>& values) {
  const auto it = std::ranges::find_if(m.nodes, [&](const node& n) { return n.name == name; });
  if (it == m.nodes.end()) throw error(fmt::format("the model has no node '{}'", name));
  const node& n = *it;
  std::vector<const value*> in;
  for (const std::string& input : n.inputs) {
    const auto v = input.empty() ? values.end() : values.find(input);
    if (!input.empty() && v == values.end()) throw error(fmt::format("node '{}': no value for its input '{}'", n.name, input));
    in.push_back(input.empty() ? nullptr : &v->second);
  }
  const mapped_op* op = find_mapped_op(n);
  const std::optional<op_call> call = op ? op->mapper(node_context(m, n, in)) : std::nullopt;
  if (!call || !call->prob)
    throw error(fmt::format("node '{}' ({}) is no op node on these values: it has no op-level case", n.name, n.op_type));
  node_case c{*call->prob, {}, {}};
  const std::vector<operand> ins = c.prob.spec().inputs(c.prob), outs = c.prob.spec().outputs(c.prob);
  for (std::size_t i = 0; i < ins.size(); ++i)
    c.inputs.emplace_back(ins[i].name, as_operand(ins[i], call->operands.at(i), n, fmt::format("operand {}", i)));
  for (std::size_t i = 0; i < outs.size() && i < n.outputs.size(); ++i)
    if (const auto v = values.find(n.outputs[i]); v != values.end())
      c.outputs.emplace_back(outs[i].name, as_operand(outs[i], v->second, n, fmt::format("output '{}'", n.outputs[i])));
  return c;
}

}  // namespace opval::graph
