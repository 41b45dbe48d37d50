// Each node of a stack's run judged against the fp64 graph reference (opval/graph.hpp's
// judge_nodes): the accumulated error of its outputs, and its local verdict — the node alone,
// on the inputs the stack gave it, through the same judge() as `opval judge`.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/output_judging.hpp"
#include "graph/graph_value.hpp"
#include "graph/node_context.hpp"
#include "graph/op_nodes.hpp"
#include "graph/region_judging.hpp"
#include "graph/structural_ops.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"
#include "opval/judge.hpp"
#include "opval/op_spec.hpp"

namespace opval::graph {

using value_map = std::map<std::string, value, std::less<>>;

namespace {


// The value a node read: what the stack gave, else for a graph input or an initializer (which
// the stack shares) the reference's; nullptr for another node's output the stack did not give
// (inside one of its fused nodes): the node cannot then be judged on the stack's own inputs.
const value* input_value(const model& m, const std::string& name, const value_map& captured,
                         const reference_run& ideal) {
  if (const auto it = captured.find(name); it != captured.end()) return &it->second;
  const bool shared = m.initializers.contains(name) ||
                      std::ranges::any_of(m.inputs, [&](const value_info& i) { return i.name == name; });
  if (const auto it = ideal.values.find(name); shared && it != ideal.values.end()) return &it->second;
  return nullptr;
}

// The worst |stack - reference| and its relative size over one output.
void accumulate(const value& got, const value& want, node_judgement& j) {
  for (std::size_t i = 0; i < got.data.size(); ++i) {
    const double g = got.data[i], w = want.data[i];
    if (std::isnan(g) && std::isnan(w)) continue;
    const double diff = g == w ? 0.0 : std::fabs(g - w);
    j.accumulated_max_abs = std::fmax(j.accumulated_max_abs, std::isnan(diff) ? INFINITY : diff);
    if (diff > 0) j.accumulated_max_rel = std::fmax(j.accumulated_max_rel, w == 0 ? INFINITY : diff / std::fabs(w));
  }
}

// A tensor of an operand's type and shape holding `v`'s elements (row-major).
tensor operand_tensor(const operand& o, const value& v) {
  tensor t(o.type, o.shape);
  t.assign(v.data);
  return t;
}

bool same_values(const value& a, const value& b) {
  if (a.shape != b.shape) return false;
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (a.data[i] != b.data[i] && !(std::isnan(a.data[i]) && std::isnan(b.data[i]))) return false;
  return true;
}

// A verdict of state `st` for `reason`, identified as the node's.
case_result node_verdict(const node& n, state st, std::string reason) {
  case_result r;
  r.backend = "judge";
  r.source = fmt::format("graph node '{}' ({})", n.name, n.op_type);
  r.v.st = st;
  r.v.reason = std::move(reason);
  return r;
}

// A structural node (or an op node needing no arithmetic on these values): PASSED when the
// stack's outputs equal the exact reference on the stack's inputs (NaN matching NaN).
case_result exact_verdict(const node& n, const std::vector<value>& want, const std::vector<const value*>& got) {
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
    if (got[i] && !same_values(*got[i], want[i]))
      return node_verdict(n, state::failed,
                          fmt::format("output '{}' differs from the exact reference on the inputs the stack gave",
                                      n.outputs[i]));
  return node_verdict(n, state::passed, "");
}

// The worst accumulated error of the node's outputs in units of its own bound at the inputs
// the stack gave it: above 1, the error built up before the node exceeds what the node alone
// may add (the error-growth view); nullopt where the bound is zero or not per element.
std::optional<double> accumulated_over_bound(const node& n, const op_call& call, const std::vector<const value*>& got,
                                             const reference_run& ideal, const run_options& o) {
  const std::vector<tensor> bounds = detail::bounds_at(*call.prob, input_tensors(call), o);
  std::optional<double> worst;
  for (std::size_t i = 0; i < bounds.size() && i < got.size() && i < n.outputs.size(); ++i) {
    const auto want = ideal.values.find(n.outputs[i]);
    if (!got[i] || want == ideal.values.end() || bounds[i].numel() != static_cast<std::int64_t>(got[i]->data.size()))
      continue;
    for (std::size_t e = 0; e < got[i]->data.size(); ++e) {
      const double g = got[i]->data[e], w = want->second.data[e], b = bounds[i].at(static_cast<std::int64_t>(e));
      if (g == w || (std::isnan(g) && std::isnan(w)) || !(b > 0) || !std::isfinite(b)) continue;
      worst = std::fmax(worst.value_or(0.0), std::isnan(g - w) ? INFINITY : std::fabs(g - w) / b);
    }
  }
  return worst;
}

// The op node's local verdict: judge() of its problem on the stack's inputs against the stack's
// outputs, reshaped to the problem's operands.
case_result op_verdict(const node& n, const op_call& call, const std::vector<const value*>& got, const run_options& o) {
  const problem& p = *call.prob;
  const std::vector<operand> outs = p.spec().outputs(p);
  std::vector<tensor> in_tensors = input_tensors(call), out_tensors;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (!got[i] || static_cast<std::int64_t>(got[i]->data.size()) != element_count(outs[i].shape))
      throw error(fmt::format("output '{}' has shape {}, the problem's has {}", n.outputs[i],
                              got[i] ? to_string(got[i]->shape) : "none", to_string(outs[i].shape)));
    out_tensors.push_back(operand_tensor(outs[i], *got[i]));
  }
  return judge(p, in_tensors, out_tensors, o, fmt::format("graph node '{}' ({})", n.name, n.op_type));
}

// The node alone on the stack's inputs.
void judge_locally(const model& m, const node& n, const std::vector<const value*>& in,
                   const std::vector<const value*>& got, const reference_run& ideal, const run_options& o,
                   node_judgement& j) {
  const node_context c(m, n, in);
  if (const mapped_op* op = find_mapped_op(n))
    if (std::optional<op_call> call = op->mapper(c)) {
      if (!call->prob) {
        j.local = exact_verdict(n, call->exact, got);
        return;
      }
      j.local = op_verdict(n, *call, got, o);
      j.accumulated_over_bound = accumulated_over_bound(n, *call, got, ideal, o);
      return;
    }
  if (const structural_fn fn = find_structural(n)) {
    j.local = exact_verdict(n, fn(c), got);
    return;
  }
  j.note = map_node(m, n).reason;
}

// Node k, whose inputs a fused node of the stack hides, judged with the nodes that computed
// them (graph/region_judging.hpp).
void judge_with_its_region(const model& m, std::size_t k, const reference_run& ideal, const value_map& captured,
                           const std::vector<const value*>& got, const run_options& o, node_judgement& j) {
  const node& n = m.nodes[k];
  const region_verdict r = judge_region(
      m, k, [&](const std::string& name) { return input_value(m, name, captured, ideal); }, got, o);
  j.note = r.note;
  if (!r.judged) return;
  j.local = node_verdict(n, r.failed ? state::failed : state::passed, r.reason);
  j.region = r.nodes;
}

// Node k of the model from what the stack gave: the values it read and wrote, the accumulated
// error of its outputs, its local verdict when all of them are there.
node_judgement judge_node(const model& m, std::size_t k, const reference_run& ideal, const value_map& captured,
                          const run_options& o) {
  const node& n = m.nodes[k];
  node_judgement j;
  j.node = n.name;
  j.op_type = n.op_type;
  j.role = k < ideal.nodes.size() ? ideal.nodes[k].role : map_node(m, n).role;
  std::vector<const value*> in, got;
  std::string missing_input, missing_output;
  for (const std::string& name : n.inputs) {
    in.push_back(name.empty() ? nullptr : input_value(m, name, captured, ideal));
    if (!name.empty() && !in.back() && missing_input.empty()) missing_input = name;
  }
  for (const std::string& name : n.outputs) {
    const auto it = name.empty() ? captured.end() : captured.find(name);
    got.push_back(it == captured.end() ? nullptr : &it->second);
    if (!name.empty() && !got.back() && missing_output.empty()) missing_output = name;
  }
  j.captured = missing_input.empty() && missing_output.empty();
  for (std::size_t i = 0; i < n.outputs.size(); ++i) {
    if (!got[i]) continue;
    const value& want = ideal.values.at(n.outputs[i]);
    if (got[i]->shape != want.shape) {
      j.local = node_verdict(n, state::failed, fmt::format("the stack's '{}' has shape {}, the model's is {}", n.outputs[i],
                                              to_string(got[i]->shape), to_string(want.shape)));
      return j;
    }
    accumulate(*got[i], want, j);
  }
  if (!missing_output.empty()) {
    j.note = fmt::format("the stack gave no '{}' (a value inside one of its fused nodes): not judged alone",
                         missing_output);
    return j;
  }
  try {
    if (missing_input.empty()) judge_locally(m, n, in, got, ideal, o, j);
    else judge_with_its_region(m, k, ideal, captured, got, o, j);
  } catch (const error& e) {
    j.note = fmt::format("not judged locally: {}", e.what());
  }
  return j;
}

}  // namespace

std::vector<node_judgement> judge_nodes(const model& m, const reference_run& ideal, const value_map& captured,
                                        const run_options& o) {
  // A stack's value is of the model's tensor, whatever array type carried it (opval's own
  // backends hand back float64 arrays): its type is the model's, so each node is judged under
  // the contract the model gives it.
  value_map typed = captured;
  for (auto& [name, v] : typed)
    if (const auto it = ideal.values.find(name); it != ideal.values.end()) v.type = it->second.type;
  std::vector<node_judgement> out;
  for (std::size_t k = 0; k < m.nodes.size(); ++k) out.push_back(judge_node(m, k, ideal, typed, o));
  return out;
}

std::vector<node_judgement> judge_stack(const model& m, const value_map& inputs, const value_map& captured,
                                        const run_options& o) {
  return judge_nodes(m, run_reference(m, inputs, captured), captured, o);
}

}  // namespace opval::graph
