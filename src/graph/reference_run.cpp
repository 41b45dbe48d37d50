// The fp64 graph reference (opval/graph.hpp): each node in execution order, an op node through
// its opval op's fp64 reference on the values it received, a structural node exactly, every
// intermediate kept for the accumulated and local judgements of graph triage.
#include <cmath>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/tensor_proto_file.hpp"
#include "graph/graph_value.hpp"
#include "graph/node_reference.hpp"
#include "graph/op_nodes.hpp"
#include "graph/structural_ops.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"
#include "opval/op_spec.hpp"

namespace opval::graph {
namespace {

// Ops ONNX defines that opval has no reference for yet: named so that the error says what is
// missing rather than that the op is unknown.
std::string unsupported_reason(const node& n) {
  if (!n.domain.empty()) return fmt::format("domain '{}' is not ONNX's default domain, which opval maps", n.domain);
  return fmt::format("opval maps no op to ONNX's {} (docs/GRAPH.md lists those it maps)", n.op_type);
}

void check_declared(const value_info& info, const value& v) {
  if (info.type && *info.type != v.type)
    throw error(fmt::format("graph input '{}' is declared {}, and was given {}", info.name, to_string(*info.type),
                            to_string(v.type)));
  if (info.shape) {
    bool fits = info.shape->size() == v.shape.size();
    for (std::size_t d = 0; fits && d < v.shape.size(); ++d) fits = (*info.shape)[d] < 0 || (*info.shape)[d] == v.shape[d];
    if (!fits)
      throw error(fmt::format("graph input '{}' is declared [{}], and was given {}", info.name,
                              fmt::join(*info.shape, ","), to_string(v.shape)));
  }
}

// x rounded to a Cast's target type as ONNX says: to nearest even; with saturation, finite
// values beyond the range and infinities become the largest finite value of their sign.
double cast_rounding(double x, dtype to, overflow o) {
  if (o == overflow::saturate && std::isinf(x)) return std::copysign(traits(to).max, x);
  return round_to(to, x, rounding::rne, o);
}

// The op's fp64 reference on the call's operands, as the node's outputs.
std::vector<value> run_op(const node_context& c, const op_call& call) {
  std::vector<value> out;
  if (call.prob) {
    const problem& p = *call.prob;
    const op_spec& spec = p.spec();
    const std::vector<operand> wanted = spec.inputs(p);
    if (wanted.size() != call.operands.size())
      c.fail(fmt::format("opval's {} takes {} operands and the mapping gave {} (an opval defect)", spec.name(),
                         wanted.size(), call.operands.size()));
    std::vector<tensor> in;
    for (const value& v : call.operands) in.push_back(to_tensor(v));
    std::vector<tensor> results;
    for (const operand& o : spec.outputs(p)) {
      check_value_size(o.shape);
      results.emplace_back(dtype::f64, o.shape);
    }
    spec.reference(p, in, results);
    for (std::size_t i = 0; i < results.size(); ++i) {
      value v = value_of_tensor(results[i], call.result_type);
      if (call.rounds_to_result_type)
        for (double& x : v.data) x = cast_rounding(x, call.result_type, call.result_overflow);
      if (i < call.result_shapes.size() && call.result_shapes[i]) v.shape = *call.result_shapes[i];
      out.push_back(std::move(v));
    }
  }
  out.insert(out.end(), call.exact.begin(), call.exact.end());
  return out;
}

// The node's outputs from `given`, when every output it names is there.
std::optional<std::vector<value>> given_outputs(const node& n, const std::map<std::string, value, std::less<>>& given) {
  std::vector<value> out;
  for (const std::string& name : n.outputs) {
    if (name.empty()) {
      out.emplace_back();
      continue;
    }
    const auto it = given.find(name);
    if (it == given.end()) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

}  // namespace

std::vector<value> node_reference(const node_context& c, node_run& record) {
  const node& n = c.current();
  if (const mapped_op* op = find_mapped_op(n))
    if (std::optional<op_call> call = op->mapper(c)) {
      record.role = call->prob ? node_role::op : node_role::structural;
      record.prob = call->prob;
      return run_op(c, *call);
    }
  if (const structural_fn fn = find_structural(n)) {
    record.role = node_role::structural;
    return fn(c);
  }
  c.unsupported_form(unsupported_reason(n));
}

std::string_view to_string(node_role r) {
  switch (r) {
    case node_role::op: return "op";
    case node_role::structural: return "structural";
    case node_role::unsupported: return "unsupported";
  }
  return "?";
}

node_mapping map_node(const model& m, const node& n) {
  if (const mapped_op* op = find_mapped_op(n)) {
    const auto to = n.attrs.find("to");
    if (n.op_type == "Cast" && to != n.attrs.end() && to->second.k == attribute::kind::integer) {
      const std::optional<dtype> t = detail::opval_type(static_cast<int>(to->second.i));
      if (t && !is_float(*t)) return {node_role::structural, "Cast", ""};
    }
    return {node_role::op, std::string(op->opval_op), ""};
  }
  if (find_structural(n)) return {node_role::structural, n.op_type, ""};
  return {node_role::unsupported, "", unsupported_reason(n)};
}

reference_run run_reference(const model& m, const std::map<std::string, value, std::less<>>& inputs,
                            const std::map<std::string, value, std::less<>>& given) {
  reference_run run;
  run.values = m.initializers;
  for (const value_info& info : m.inputs) {
    const auto it = inputs.find(info.name);
    if (it == inputs.end()) throw error(fmt::format("{}: graph input '{}' was not given", m.source, info.name));
    check_declared(info, it->second);
    run.values[info.name] = it->second;
  }
  for (const auto& [name, v] : inputs) {
    if (m.initializers.contains(name)) {
      run.values[name] = v;  // an initializer given as an input overrides it, as ONNX Runtime allows
    } else if (!run.values.contains(name)) {
      throw error(fmt::format("{}: '{}' was given, and is no graph input or initializer", m.source, name));
    }
  }
  for (const node& n : m.nodes) {
    std::vector<const value*> in;
    for (const std::string& name : n.inputs) in.push_back(name.empty() ? nullptr : &run.values.at(name));
    const node_context c(m, n, std::move(in));
    node_run record{n.name, n.op_type, node_role::unsupported, std::nullopt, false};
    std::vector<value> out;
    try {
      out = node_reference(c, record);
    } catch (const unsupported&) {
      std::optional<std::vector<value>> taken = given_outputs(n, given);
      if (!taken) throw;
      out = std::move(*taken);
      record.given = true;
      record.role = node_role::unsupported;
    } catch (const std::bad_alloc&) {
      c.fail("its values do not fit in this machine's memory");
    } catch (const error& e) {
      // What the shared code below the node says (a value too large, an op's own check)
      // gets the node's name, once.
      if (std::string_view(e.what()).starts_with("node '")) throw;
      c.fail(e.what());
    }
    if (out.size() < n.outputs.size())
      c.fail(fmt::format("it names {} outputs and gives {}", n.outputs.size(), out.size()));
    for (std::size_t i = 0; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) run.values[n.outputs[i]] = std::move(out[i]);
    run.nodes.push_back(std::move(record));
  }
  return run;
}

}  // namespace opval::graph
