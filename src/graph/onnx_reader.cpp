// ONNX models into opval's graph IR (opval/graph.hpp), read with Debian's ONNX protobuf
// classes (the same as judge's TensorProto files): the default-domain opset, the graph's
// inputs, outputs, initializers and nodes, checked so that the graph reference can trust them
// (every input produced once before it is read, no cycle) and put in an order of execution.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "core/tensor_proto_file.hpp"
#include "graph/graph_value.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"

namespace opval::graph {
namespace {

value value_of_proto(const onnx::TensorProto& t, const std::string& fallback_name) {
  const array_data a = detail::array_of(t, fallback_name);
  return value_of(parse_dtype(a.type), a.shape, a.bytes, a.name);
}

attribute attribute_of(const onnx::AttributeProto& a) {
  attribute out;
  using A = onnx::AttributeProto;
  if (!a.ref_attr_name().empty()) {
    out.other = fmt::format("a reference to the function attribute '{}'", a.ref_attr_name());
    return out;
  }
  switch (a.type()) {
    case A::INT: out.k = attribute::kind::integer; out.i = a.i(); break;
    case A::FLOAT: out.k = attribute::kind::real; out.f = a.f(); break;
    case A::STRING: out.k = attribute::kind::text; out.s = a.s(); break;
    case A::TENSOR:
      out.k = attribute::kind::tensor;
      out.t = std::make_shared<const value>(value_of_proto(a.t(), a.name()));
      break;
    case A::INTS: out.k = attribute::kind::integers; out.ints.assign(a.ints().begin(), a.ints().end()); break;
    case A::FLOATS: out.k = attribute::kind::reals; out.reals.assign(a.floats().begin(), a.floats().end()); break;
    case A::STRINGS: out.k = attribute::kind::texts; out.texts.assign(a.strings().begin(), a.strings().end()); break;
    case A::GRAPH: case A::GRAPHS: out.other = "a subgraph"; break;
    case A::SPARSE_TENSOR: case A::SPARSE_TENSORS: out.other = "a sparse tensor"; break;
    default: out.other = fmt::format("an attribute of type {}", static_cast<int>(a.type())); break;
  }
  return out;
}

value_info info_of(const onnx::ValueInfoProto& v) {
  value_info out{v.name(), true, std::nullopt, std::nullopt};
  if (!v.type().has_tensor_type()) {
    out.is_tensor = false;
    return out;
  }
  const auto& t = v.type().tensor_type();
  if (t.elem_type() != 0) {
    out.type = detail::opval_type(t.elem_type());
    if (!out.type)
      throw error(fmt::format("graph value '{}' has ONNX element type {}, none opval has", v.name(), t.elem_type()));
  }
  if (t.has_shape()) {
    dims shape;
    for (const auto& d : t.shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    out.shape = std::move(shape);
  }
  return out;
}

node node_of(const onnx::NodeProto& n, std::size_t index) {
  node out;
  out.op_type = n.op_type();
  if (out.op_type.empty()) throw error(fmt::format("node #{} has no op type", index));
  out.name = n.name().empty() ? fmt::format("{}#{}", out.op_type, index) : n.name();
  out.domain = n.domain() == "ai.onnx" ? "" : n.domain();
  out.inputs.assign(n.input().begin(), n.input().end());
  out.outputs.assign(n.output().begin(), n.output().end());
  for (const auto& a : n.attribute()) {
    try {
      out.attrs[a.name()] = attribute_of(a);
    } catch (const error& e) {
      throw error(fmt::format("node '{}' ({}), attribute '{}': {}", out.name, out.op_type, a.name(), e.what()));
    }
  }
  return out;
}

// The nodes in an order where each runs after the producers of its inputs (ONNX requires the
// file's order to be one; a stable sort keeps it where it is). A value produced twice, an
// input nothing produces, or a cycle is an error naming the node.
std::vector<node> execution_order(std::vector<node> nodes, std::set<std::string, std::less<>> available) {
  std::map<std::string, std::size_t, std::less<>> producer;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& o : nodes[i].outputs) {
      if (o.empty()) continue;
      if (available.contains(o) || !producer.emplace(o, i).second)
        throw error(fmt::format("value '{}' is produced twice (again by node '{}')", o, nodes[i].name));
    }
  for (const node& n : nodes)
    for (const std::string& in : n.inputs)
      if (!in.empty() && !available.contains(in) && !producer.contains(in))
        throw error(fmt::format("node '{}' ({}) reads '{}', which no node, graph input or initializer gives", n.name,
                                n.op_type, in));
  std::vector<node> ordered;
  std::vector<bool> done(nodes.size(), false);
  while (ordered.size() < nodes.size()) {
    bool progressed = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (done[i]) continue;
      const bool ready = std::ranges::all_of(nodes[i].inputs, [&](const std::string& in) {
        return in.empty() || available.contains(in);
      });
      if (!ready) continue;
      for (const std::string& o : nodes[i].outputs)
        if (!o.empty()) available.insert(o);
      done[i] = progressed = true;
      ordered.push_back(std::move(nodes[i]));
    }
    if (!progressed) {
      const auto stuck = std::find(done.begin(), done.end(), false) - done.begin();
      throw error(fmt::format("the graph has a cycle through node '{}' ({})", nodes[stuck].name, nodes[stuck].op_type));
    }
  }
  return ordered;
}

std::int64_t default_opset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  throw error("it imports no opset of the default ONNX domain");
}

model model_of(const onnx::ModelProto& proto, const std::string& source) {
  if (!proto.has_graph()) throw error("it has no graph");
  model m;
  m.source = source;
  m.producer = proto.producer_name() + (proto.producer_version().empty() ? "" : " " + proto.producer_version());
  m.ir_version = proto.ir_version();
  m.opset = default_opset(proto);
  const onnx::GraphProto& g = proto.graph();
  if (g.sparse_initializer_size() > 0) throw error("it has sparse initializers, which opval does not read");
  std::set<std::string, std::less<>> available;
  for (const auto& t : g.initializer()) {
    if (t.name().empty()) throw error("an initializer has no name");
    try {
      m.initializers[t.name()] = value_of_proto(t, t.name());
    } catch (const error& e) {
      throw error(fmt::format("initializer '{}': {}", t.name(), e.what()));
    }
    available.insert(t.name());
  }
  for (const auto& in : g.input()) {
    if (m.initializers.contains(in.name())) continue;  // IR < 4 lists initializers as inputs too
    if (in.name().empty()) throw error("a graph input has no name");
    m.inputs.push_back(info_of(in));
    available.insert(in.name());
  }
  for (const auto& out : g.output()) m.outputs.push_back(info_of(out));
  std::vector<node> nodes;
  for (int i = 0; i < g.node_size(); ++i) nodes.push_back(node_of(g.node(i), static_cast<std::size_t>(i)));
  std::set<std::string, std::less<>> produced = available;
  m.nodes = execution_order(std::move(nodes), std::move(available));
  for (const node& n : m.nodes) produced.insert(n.outputs.begin(), n.outputs.end());
  for (const value_info& out : m.outputs)
    if (!produced.contains(out.name)) throw error(fmt::format("graph output '{}' is produced by nothing", out.name));
  return m;
}

}  // namespace

model parse_onnx(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw error(fmt::format("{}: the model is over 2 GiB, which protobuf cannot parse in one piece", source));
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw error(fmt::format("{}: it is no ONNX model (the protobuf does not parse)", source));
  try {
    return model_of(proto, source);
  } catch (const error& e) {
    throw error(fmt::format("{}: {}", source, e.what()));
  }
}

model read_onnx(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw error(fmt::format("{}: is a folder, not a model file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(fmt::format("{}: cannot open the model file", path));
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw error(fmt::format("{}: reading the model file failed", path));
  return parse_onnx(std::as_bytes(std::span(chars)), path);
}

}  // namespace opval::graph
