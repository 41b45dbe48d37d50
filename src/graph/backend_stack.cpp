// The graph run on one of opval's backends (opval/graph.hpp's run_on_backend): a user's
// kernel dropped into a real model. Each op node's opval problem runs on the backend on the
// values the stack itself produced, in the operands' types and layouts, as a case would.
#include <fmt/format.h>

#include "graph/graph_value.hpp"
#include "graph/node_context.hpp"
#include "graph/op_nodes.hpp"
#include "graph/structural_ops.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"
#include "opval/op_spec.hpp"

namespace opval::graph {
namespace {

// The backend that runs p: `b` when it implements it, else the fallback, else none (the
// caller emulates the contract).
backend* runner_for(const problem& p, backend& b, backend* fallback) {
  if (b.supports(p).ok) return &b;
  if (fallback && fallback->supports(p).ok) return fallback;
  return nullptr;
}

// The op's outputs from `runner` (or opval's contract-exact emulation), on operand tensors of
// the problem's types and layouts holding the call's values; `implementation`: the kernel the
// runner says it ran.
std::vector<value> executed(const op_call& call, backend* runner, std::string& implementation) {
  const problem& p = *call.prob;
  const op_spec& spec = p.spec();
  std::vector<tensor> in = allocate(spec.inputs(p)), out = allocate(spec.outputs(p));
  for (std::size_t i = 0; i < in.size(); ++i) in[i].assign(call.operands[i].data);
  if (runner) {
    runner->prepare(p, in, out);
    implementation = runner->execute(p, in, out).implementation;
    runner->synchronize(out);
  } else {
    spec.simulate(p, in, out);
  }
  std::vector<value> values;
  for (std::size_t i = 0; i < out.size(); ++i) {
    value v = value_of_tensor(out[i], call.result_type);
    if (i < call.result_shapes.size() && call.result_shapes[i]) v.shape = *call.result_shapes[i];
    values.push_back(std::move(v));
  }
  values.insert(values.end(), call.exact.begin(), call.exact.end());
  return values;
}

}  // namespace

backend_run run_on_backend(const model& m, const std::map<std::string, value, std::less<>>& inputs, backend& b,
                           backend* fallback) {
  backend_run run;
  run.values = m.initializers;
  for (const auto& [name, v] : inputs) run.values[name] = v;
  for (const node& n : m.nodes) {
    std::vector<const value*> in;
    for (const std::string& name : n.inputs) {
      const auto it = run.values.find(name);
      in.push_back(name.empty() || it == run.values.end() ? nullptr : &it->second);
    }
    const node_context c(m, n, in);
    std::vector<value> out;
    const mapped_op* op = find_mapped_op(n);
    std::optional<op_call> call = op ? op->mapper(c) : std::nullopt;
    if (call && call->prob) {
      backend* runner = runner_for(*call->prob, b, fallback);
      run.ran_on[n.name] = runner ? runner->name() : "sim (contract emulation)";
      std::string implementation;
      out = executed(*call, runner, implementation);
      if (!implementation.empty()) run.implementations[n.name] = std::move(implementation);
    } else if (call) {
      out = call->exact;
    } else if (const structural_fn fn = find_structural(n)) {
      out = fn(c);
    } else {
      c.unsupported_form(map_node(m, n).reason);
    }
    for (std::size_t i = 0; i < n.outputs.size() && i < out.size(); ++i)
      if (!n.outputs[i].empty()) run.values[n.outputs[i]] = std::move(out[i]);
  }
  return run;
}

}  // namespace opval::graph
