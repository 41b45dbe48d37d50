// The graph commands of the library, which the CLI (`opval graph info|reference`) and Python
// call: binding the user's arrays to the graph inputs, the model's table, the reference run's
// summary and its values saved as arrays.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/array_files.hpp"
#include "graph/graph_value.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"
#include "opval/op_spec.hpp"

namespace opval::graph {
namespace {

// The operand a graph input is bound as: its declared type, and the given array's shape
// where it has one (the run checks it against the declared, possibly symbolic, shape).
operand operand_of(const value_info& info, std::span<const array_data> arrays, bool only_one) {
  if (!info.is_tensor)
    throw unsupported(fmt::format("graph input '{}' is no tensor (a sequence, map or optional), which opval does not take",
                                  info.name));
  if (!info.type) throw error(fmt::format("graph input '{}' declares no element type", info.name));
  operand o{info.name, *info.type, info.shape.value_or(dims{}), {}};
  const auto it = std::ranges::find_if(arrays, [&](const array_data& a) { return a.name == info.name; });
  if (it != arrays.end()) o.shape = it->shape;
  else if (only_one) o.shape = arrays.front().shape;
  return o;
}

std::string role_counts(const model& m) {
  std::map<node_role, int> counts;
  std::vector<std::string> unsupported;
  for (const node& n : m.nodes) {
    const node_mapping mapping = map_node(m, n);
    ++counts[mapping.role];
    if (mapping.role == node_role::unsupported && std::ranges::find(unsupported, n.op_type) == unsupported.end())
      unsupported.push_back(n.op_type);
  }
  std::string text = fmt::format("{} op, {} structural, {} unsupported", counts[node_role::op],
                                 counts[node_role::structural], counts[node_role::unsupported]);
  if (!unsupported.empty()) text += fmt::format(" ({})", fmt::join(unsupported, ", "));
  return text;
}

std::string counted(std::size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string header_of(const model& m) {
  return fmt::format("{}: ONNX IR {}, opset {}{}; {}, {}, {}, {}", m.source, m.ir_version, m.opset,
                     m.producer.empty() ? "" : ", from " + m.producer, counted(m.inputs.size(), "input"),
                     counted(m.outputs.size(), "output"), counted(m.initializers.size(), "initializer"),
                     counted(m.nodes.size(), "node"));
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<double>& data) {
  std::vector<std::byte> out(data.size() * sizeof(T));
  for (std::size_t i = 0; i < data.size(); ++i) {
    const T v = static_cast<T>(data[i]);
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return out;
}

std::string range_of(const value& v) {
  if (v.data.empty()) return "empty";
  const auto [lo, hi] = std::ranges::minmax(v.data);
  const bool finite = std::ranges::all_of(v.data, [](double x) { return std::isfinite(x); });
  return fmt::format("[{:.6g}, {:.6g}]{}", lo, hi, finite ? "" : " (not all finite)");
}

}  // namespace

std::map<std::string, value, std::less<>> bind_inputs(const model& m, std::span<const array_data> arrays) {
  std::vector<operand> operands;
  const bool only_one = m.inputs.size() == 1 && arrays.size() == 1;
  for (const value_info& info : m.inputs) operands.push_back(operand_of(info, arrays, only_one));
  const std::vector<tensor> tensors = bind_arrays(operands, arrays, "graph input");
  std::map<std::string, value, std::less<>> out;
  for (std::size_t i = 0; i < operands.size(); ++i) out[operands[i].name] = value_of_tensor(tensors[i], operands[i].type);
  return out;
}

std::vector<array_data> arrays_of(const reference_run& run) {
  std::vector<array_data> out;
  for (const auto& [name, v] : run.values) {
    array_data a{name, "<f8", v.shape, {}};
    if (v.type == dtype::boolean) {
      a.type = "|b1";
      a.bytes = bytes_of<std::uint8_t>(v.data);
    } else if (is_float(v.type)) {
      a.bytes = bytes_of<double>(v.data);
    } else {
      a.type = "<i8";
      a.bytes = bytes_of<std::int64_t>(v.data);
    }
    out.push_back(std::move(a));
  }
  return out;
}

void print_model(const model& m, std::ostream& out) {
  fmt::print(out, "{}\n", header_of(m));
  fmt::print(out, "  {:>4}  {:<32} {:<20} {:<12} {}\n", "#", "node", "op type", "role", "as");
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    const node& n = m.nodes[i];
    const node_mapping mapping = map_node(m, n);
    const std::string op_type = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
    fmt::print(out, "  {:>4}  {:<32} {:<20} {:<12} {}\n", i, n.name, op_type, to_string(mapping.role),
               mapping.role == node_role::op ? mapping.op : mapping.role == node_role::structural ? "(exact)" : mapping.reason);
  }
  fmt::print(out, "nodes: {}\n", role_counts(m));
}

int reference_command(const std::string& path, const std::vector<std::string>& input_files, const std::string& save,
                      bool verbose, std::ostream& out) {
  const model m = read_onnx(path);
  const std::vector<array_data> arrays = read_array_files(input_files);
  const reference_run run = run_reference(m, bind_inputs(m, arrays));
  fmt::print(out, "{}\nfp64 graph reference: {}\n", header_of(m), role_counts(m));
  if (verbose)
    for (const node_run& n : run.nodes)
      fmt::print(out, "  {:<32} {:<20} {:<12} {}\n", n.node, n.op_type, to_string(n.role),
                 n.prob ? n.prob->to_string() : "");
  fmt::print(out, "  {:<24} {:<6} {:<16} {}\n", "output", "type", "shape", "range");
  for (const value_info& o : m.outputs) {
    const value& v = run.values.at(o.name);
    fmt::print(out, "  {:<24} {:<6} {:<16} {}\n", o.name, to_string(v.type), to_string(v.shape), range_of(v));
  }
  if (!save.empty()) {
    write_npz(save, arrays_of(run));
    fmt::print(out, "saved {} values (inputs, initializers, every intermediate; floats as f64) to {}\n",
               run.values.size(), save);
  }
  return 0;
}

}  // namespace opval::graph
