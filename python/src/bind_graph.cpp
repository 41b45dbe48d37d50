// Models as graphs (opval/graph.hpp): reading an ONNX model from a file or bytes, what each
// node becomes, and the fp64 graph reference, whose values come back as (name, type, shape,
// bytes) tuples that python/opval/graph.py turns into NumPy arrays.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "backend_handle.hpp"
#include "bindings.hpp"
#include "core/array_files.hpp"
#include "graph/op_nodes.hpp"
#include "graph/structural_ops.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"
#include "opval/runner.hpp"

namespace opval::python {
namespace {

using array_tuple = std::tuple<std::string, std::string, dims, nb::bytes>;

std::vector<array_data> arrays_from(const std::vector<array_tuple>& given) {
  std::vector<array_data> out;
  for (const auto& [name, type, shape, bytes] : given) {
    const auto* data = static_cast<const std::byte*>(bytes.data());
    out.push_back({name, type, shape, std::vector<std::byte>(data, data + bytes.size())});
  }
  return out;
}

std::vector<array_tuple> tuples_of(const std::vector<array_data>& arrays) {
  std::vector<array_tuple> out;
  for (const array_data& a : arrays) out.emplace_back(a.name, a.type, a.shape, nb::bytes(a.bytes.data(), a.bytes.size()));
  return out;
}

// Values as (name, opval type, shape, float64 bytes): opval.graph types them as NumPy arrays.
nb::list typed_tuples(const std::vector<std::pair<std::string, graph::value>>& values) {
  nb::list out;
  for (const auto& [name, v] : values)
    out.append(nb::make_tuple(name, std::string(to_string(v.type)), v.shape,
                              nb::bytes(reinterpret_cast<const char*>(v.data.data()), v.data.size() * sizeof(double))));
  return out;
}

// Values given by name (a stack's outputs of nodes opval cannot run), as the graph keeps them.
std::map<std::string, graph::value, std::less<>> values_of(const std::vector<array_tuple>& given) {
  std::map<std::string, graph::value, std::less<>> out;
  for (const array_data& a : arrays_from(given)) {
    const std::optional<dtype> type = dtype_of_stored(a.type);
    if (!type) throw error("given array '" + a.name + "' is stored as '" + a.type + "', which names no one opval type");
    out[a.name] = graph::value_of(*type, a.shape, a.bytes, a.name);
  }
  return out;
}

nb::dict node_dict(const graph::model& m, const graph::node& n) {
  const graph::node_mapping mapping = graph::map_node(m, n);
  nb::dict d;
  d["name"] = n.name;
  d["op_type"] = n.op_type;
  d["domain"] = n.domain;
  d["inputs"] = n.inputs;
  d["outputs"] = n.outputs;
  d["role"] = std::string(graph::to_string(mapping.role));
  d["op"] = mapping.op;
  d["reason"] = mapping.reason;
  return d;
}

}  // namespace

void bind_graph(nb::module_& m) {
  // Registered after the module's opval::error translator, so tried before it: what opval does
  // not map yet is a ValueError of its own class (opval.graph.Unsupported).
  nb::exception<graph::unsupported>(m, "GraphUnsupported", PyExc_ValueError);
  nb::class_<graph::model>(m, "GraphModel", "An ONNX model read into opval's graph IR (opval/graph.hpp)")
      .def_ro("source", &graph::model::source)
      .def_ro("producer", &graph::model::producer)
      .def_ro("opset", &graph::model::opset)
      .def_ro("contracts", &graph::model::contracts)
      .def_prop_ro("input_names", [](const graph::model& g) {
        std::vector<std::string> names;
        for (const auto& i : g.inputs) names.push_back(i.name);
        return names;
      }, "the graph inputs that are not initializers")
      .def_prop_ro("output_names", [](const graph::model& g) {
        std::vector<std::string> names;
        for (const auto& o : g.outputs) names.push_back(o.name);
        return names;
      })
      .def_prop_ro("nodes", [](const graph::model& g) {
        nb::list out;
        for (const graph::node& n : g.nodes) out.append(node_dict(g, n));
        return out;
      }, "each node in execution order: name, op_type, domain, inputs, outputs, role, op, reason");
  m.def("graph_op_types", [] {
    std::map<std::string, std::string> mapped;
    for (const graph::mapped_op& op : graph::mapped_ops()) mapped[std::string(op.op_type)] = std::string(op.opval_op);
    std::vector<std::string> structural;
    for (const std::string_view t : graph::structural_op_types())
      if (!mapped.contains(std::string(t))) structural.emplace_back(t);
    return std::make_pair(mapped, structural);
  }, "the ONNX op types opval maps: {op type: opval op} and the structural ones (exact references)");
  m.def("read_onnx", &graph::read_onnx, nb::arg("path"), "reads an ONNX model file; a bad model raises ValueError");
  m.def("parse_onnx", [](nb::bytes data, const std::string& source) {
    return graph::parse_onnx({static_cast<const std::byte*>(data.data()), data.size()}, source);
  }, nb::arg("data"), nb::arg("source") = "<bytes>", "reads a serialized ONNX model");
  m.def("graph_with_contracts", [](const graph::model& g, std::map<std::string, std::string, std::less<>> contracts) {
    return graph::with_contracts(g, std::move(contracts));
  }, nb::arg("model"), nb::arg("contracts"),
        "the model judged under contract overrides {node name or op type: contract}; a key naming nothing raises");
  m.def("run_graph_reference", [](const graph::model& g, const std::vector<array_tuple>& inputs,
                                  const std::vector<array_tuple>& given) {
    const std::vector<array_data> arrays = arrays_from(inputs);
    const auto bound = graph::bind_inputs(g, arrays);
    const auto taken = values_of(given);
    graph::reference_run run;
    {
      nb::gil_scoped_release unlocked;
      run = graph::run_reference(g, bound, taken);
    }
    nb::list nodes;
    for (const graph::node_run& n : run.nodes) {
      nb::dict d;
      d["node"] = n.node;
      d["op_type"] = n.op_type;
      d["role"] = std::string(graph::to_string(n.role));
      d["descriptor"] = n.prob ? n.prob->to_string() : std::string();
      d["given"] = n.given;
      nodes.append(d);
    }
    return std::make_pair(tuples_of(graph::arrays_of(run)), nodes);
  }, nb::arg("model"), nb::arg("inputs"), nb::arg("given"),
        "the fp64 graph reference: every value as (name, type, shape, bytes) and each node's record");
  m.def("run_graph_on_backend", [](const graph::model& g, const std::vector<array_tuple>& inputs,
                                   const backend_handle& b) {
    const auto bound = graph::bind_inputs(g, arrays_from(inputs));
    graph::backend_run run;
    {
      // A Python backend's kernel takes the lock itself when it is called.
      nb::gil_scoped_release unlocked;
      run = graph::run_on_backend(g, bound, *b.impl);
    }
    graph::reference_run as_run;
    as_run.values = std::move(run.values);
    return std::make_tuple(tuples_of(graph::arrays_of(as_run)), run.ran_on, run.implementations);
  }, nb::arg("model"), nb::arg("inputs"), nb::arg("backend"),
        "the graph on an opval backend (ops it lacks: contract emulation): every value, which backend ran each op "
        "node and which of its kernels, where it says");
  m.def("graph_node_case", [](const graph::model& g, const std::string& node, const std::vector<array_tuple>& values) {
    const graph::node_case c = graph::case_of_node(g, node, values_of(values));
    return nb::make_tuple(c.prob.to_string(), typed_tuples(c.inputs), typed_tuples(c.outputs));
  }, nb::arg("model"), nb::arg("node"), nb::arg("values"),
        "a node as its op-level case: (descriptor, inputs, outputs), each operand (name, opval type, shape, f64 bytes)");
  m.def("bind_graph_inputs", [](const graph::model& g, const std::vector<array_tuple>& arrays) {
    const auto bound = graph::bind_inputs(g, arrays_from(arrays));
    return typed_tuples(std::vector<std::pair<std::string, graph::value>>(bound.begin(), bound.end()));
  }, nb::arg("model"), nb::arg("arrays"),
        "the graph inputs bound from arrays as the model declares them (checked: names, types, shapes), each "
        "(name, opval type, shape, f64 bytes)");
  m.def("judge_graph_nodes", [](const graph::model& g, const std::vector<array_tuple>& inputs,
                                const std::vector<array_tuple>& captured, const run_options& o) {
    const std::vector<array_data> arrays = arrays_from(inputs);
    const auto bound = graph::bind_inputs(g, arrays);
    const auto taken = values_of(captured);
    std::vector<graph::node_judgement> judged;
    {
      nb::gil_scoped_release unlocked;
      judged = graph::judge_stack(g, bound, taken, o);
    }
    nb::list out;
    for (graph::node_judgement& j : judged) {
      nb::dict d;
      d["node"] = j.node;
      d["op_type"] = j.op_type;
      d["role"] = std::string(graph::to_string(j.role));
      d["captured"] = j.captured;
      d["accumulated_max_abs"] = j.accumulated_max_abs;
      d["accumulated_max_rel"] = j.accumulated_max_rel;
      d["accumulated_over_bound"] = j.accumulated_over_bound ? nb::cast(*j.accumulated_over_bound) : nb::none();
      d["local"] = j.local ? nb::cast(std::move(*j.local)) : nb::none();
      d["note"] = j.note;
      d["region"] = j.region;
      out.append(d);
    }
    return out;
  }, nb::arg("model"), nb::arg("inputs"), nb::arg("captured"), nb::arg("options"),
        "each node judged from a stack's captured values: accumulated error and local verdict (a CaseResult)");
}

}  // namespace opval::python
