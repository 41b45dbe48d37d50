#pragma once
// A model as a graph of nodes (docs/GRAPH.md): read from an ONNX file, each node an opval op
// (attributes and contract mapped), a structural op with an exact reference (reshape,
// transpose, gather, ...) or an op opval does not know; and the fp64 graph reference, which
// runs the graph node by node on opval's fp64 references and keeps every intermediate.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/backend.hpp"
#include "opval/dtype.hpp"
#include "opval/error.hpp"
#include "opval/judge.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"
#include "opval/tensor.hpp"

namespace opval::graph {

/// What opval does not map yet: an op type, a form of a mapped op (a 3-D pool, MaxPool's
/// Indices output, a float-only op on integers) or a graph input that is no tensor (a sequence,
/// an optional). The graph reference takes such a node's outputs from a stack where given;
/// otherwise this is the error, naming the node and what it lacks.
class unsupported : public error {
 public:
  using error::error;
};

/// A tensor value of the graph: the element type the model gives it and its elements in
/// row-major order, each decoded exactly to double (integers up to 2^53 are exact; larger
/// int64 values, such as INT64_MAX as a slice end, are read saturated where used as indices).
struct value {
  dtype type = dtype::f32;
  dims shape;
  std::vector<double> data;
};

/// One attribute of a node, as the model states it.
struct attribute {
  enum class kind : std::uint8_t { integer, real, text, tensor, integers, reals, texts, other };
  kind k = kind::other;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string> texts;
  std::shared_ptr<const value> t;  ///< kind::tensor
  std::string other;               ///< kind::other: what it is (a subgraph, a sparse tensor, ...)
};

using attributes = std::map<std::string, attribute, std::less<>>;

/// One node: its op type (and domain, "" for the default ONNX domain), the names of the values
/// it reads (an empty name is an omitted optional input) and writes, and its attributes.
struct node {
  std::string name;  ///< the model's name, or "<op_type>#<index>" when it has none
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  attributes attrs;
};

/// A graph input or output as declared: its element type and shape (-1: an extent the model
/// leaves symbolic), each when the model states it.
struct value_info {
  std::string name;
  bool is_tensor = true;  ///< false for a sequence, map or optional value
  std::optional<dtype> type;
  std::optional<dims> shape;
};

/// A model: the default-domain opset it imports, its inputs (those that are not
/// initializers), outputs, initializers and nodes, in an order where each node comes after
/// the producers of its inputs.
struct model {
  std::string source;  ///< the file it was read from
  std::string producer;
  std::int64_t ir_version = 0;
  std::int64_t opset = 0;
  std::vector<value_info> inputs;
  std::vector<value_info> outputs;
  std::map<std::string, value, std::less<>> initializers;
  std::vector<node> nodes;
  /// The contract a stack documents for some nodes, overriding the one their tensor types
  /// imply: by node name or by ONNX op type (a node's name wins), e.g. {"MatMul",
  /// "f32@tf32:f32:f32"} for a stack that runs f32 matmuls with tf32 math. Set by with_contracts.
  std::map<std::string, std::string, std::less<>> contracts;
};

/// `m` judged under `contracts` (model::contracts). A key naming no node and no op type of the
/// model is an opval::error naming it; each contract is checked when its node is mapped: one
/// the node's op supports, storing the values in the types the model gives them (only the
/// math and accumulation may differ: the values are the model's), else an error naming the node.
model with_contracts(model m, std::map<std::string, std::string, std::less<>> contracts);
/// The contract override of node `n` of `m`, or nullptr.
const std::string* contract_override(const model& m, const node& n);

/// Reads an ONNX model file. A file that is no ONNX model, a graph whose nodes read values
/// nothing produces or that has a cycle, an element type opval has no counterpart of, or data
/// kept outside the file is an opval::error naming the file and the part.
model read_onnx(const std::string& path);
/// The same from the file's bytes (`source` names it in errors).
model parse_onnx(std::span<const std::byte> bytes, const std::string& source);

/// How the graph reference treats a node.
enum class node_role : std::uint8_t {
  op,          ///< an opval op: fp64 reference, error bound, local judgement
  structural,  ///< moves, selects or converts values exactly (reshape, gather, integer casts)
  unsupported  ///< neither: named in an error, or its outputs taken from a stack
};

std::string_view to_string(node_role r);

/// What opval makes of a node, from its op type, domain, the model's opset and attributes
/// (shapes are known only when it runs): its role, the opval op or structural op it becomes,
/// and for an unsupported node why.
struct node_mapping {
  node_role role = node_role::unsupported;
  std::string op;
  std::string reason;
};

node_mapping map_node(const model& m, const node& n);

/// One node as the graph reference ran it: for an op node, the opval problem (descriptor) it
/// was on the values it received, in the node's input order as that problem's operands.
struct node_run {
  std::string node;
  std::string op_type;
  node_role role = node_role::unsupported;
  std::optional<problem> prob;
  /// An unsupported node whose outputs were taken from `given` (a stack's), not computed.
  bool given = false;
};

/// The graph reference's run: every value (inputs, initializers, each node's outputs) and each
/// node's record, in execution order.
struct reference_run {
  std::map<std::string, value, std::less<>> values;
  std::vector<node_run> nodes;
};

/// Runs m on `inputs` (by graph input name; every input without an initializer must be
/// given, of its declared type and rank) with opval's fp64 references, keeping every
/// intermediate. A node opval cannot run (graph::unsupported) takes its outputs from `given`
/// (values captured from a stack, by name: an opaque node); where they are not there, the
/// unsupported error names the node, its op type and why. Other nodes are always computed.
reference_run run_reference(const model& m, const std::map<std::string, value, std::less<>>& inputs,
                            const std::map<std::string, value, std::less<>>& given = {});

/// A run of the graph on one of opval's backends (sim, oneDNN, a plugin): each op node's
/// problem executed by the backend on the values the previous nodes gave (rounded to the
/// operand types), an op the backend does not implement by `fallback` (opval's contract-exact
/// emulation when none), structural nodes exactly. `values` holds every value by name;
/// `ran_on` says, per op node, which backend ran it, and `implementations` which of its
/// kernels, where the backend says (oneDNN's implementation string: "oneDNN brg:avx512_core").
struct backend_run {
  std::map<std::string, value, std::less<>> values;
  std::map<std::string, std::string, std::less<>> ran_on;
  std::map<std::string, std::string, std::less<>> implementations;
};

backend_run run_on_backend(const model& m, const std::map<std::string, value, std::less<>>& inputs, backend& b,
                           backend* fallback = nullptr);

/// One node of a stack's run, judged against the fp64 graph reference (docs/GRAPH.md).
struct node_judgement {
  std::string node;
  std::string op_type;
  node_role role = node_role::unsupported;
  /// The stack's outputs of the node, and the inputs it read, were all captured.
  bool captured = false;
  /// Accumulated error: the stack's outputs against the fp64 graph reference's, the worst
  /// element over the node's outputs (relative: |diff| / |reference|, 0 where both are 0).
  double accumulated_max_abs = 0;
  double accumulated_max_rel = 0;
  /// The accumulated error in units of the node's own bound at the inputs the stack gave it
  /// (the worst element): above 1, more error reached the node than it alone may add. An op
  /// node judged alone only.
  std::optional<double> accumulated_over_bound;
  /// Local: the node alone on the inputs the stack gave it. An op node: judge() of its opval
  /// problem on those inputs against the stack's outputs (bound, metrics, explanation). A
  /// structural node: PASSED when the stack's outputs equal its exact reference. A stack's
  /// output of another shape than the model's is FAILED.
  /// Empty when not captured, or for an unsupported node.
  std::optional<case_result> local;
  std::string note;  ///< why the node was not judged locally, when it was not
  /// The nodes it was judged with, itself last, when a fused node of the stack hid its inputs
  /// (a fused region, judged as one); empty otherwise.
  std::vector<std::string> region;
};

/// Judges each node of `ideal`'s model (run by run_reference) from what a stack gave:
/// `captured` holds values by name (the stack's outputs of nodes, and graph inputs). A node
/// whose local verdict fails is one whose error its inputs do not explain; a node that only
/// inherits upstream error passes locally while its accumulated error grows. Uses o's policy.
std::vector<node_judgement> judge_nodes(const model& m, const reference_run& ideal,
                                        const std::map<std::string, value, std::less<>>& captured,
                                        const run_options& o = {});

/// judge_nodes of a stack's run: the fp64 graph reference on `inputs`, the nodes opval cannot
/// run taking the stack's outputs from `captured` (opaque nodes), then each node judged.
std::vector<node_judgement> judge_stack(const model& m, const std::map<std::string, value, std::less<>>& inputs,
                                        const std::map<std::string, value, std::less<>>& captured,
                                        const run_options& o = {});

/// A graph node as the op-level case it is on given values: its opval problem, and the
/// problem's operands by their names — inputs from the values the node read, outputs from its
/// own outputs where given — each shaped as the problem's operand: what `opval judge` replays.
struct node_case {
  problem prob;
  std::vector<std::pair<std::string, value>> inputs;
  std::vector<std::pair<std::string, value>> outputs;
};

/// Node `node` of `m` on `values` (every value it reads, by name; its outputs too for the
/// case's outputs). An opval::error naming the node when there is no such node or it is no op
/// node on these values (a structural node, an unsupported one, a value missing).
node_case case_of_node(const model& m, std::string_view node, const std::map<std::string, value, std::less<>>& values);

/// The graph inputs from arrays as the user holds them (opval/judge.hpp's array_data: .npy,
/// .npz and TensorProto .pb files, or Python's arrays), matched by name (one array for a
/// model with one input need not match), each stored as the type the model declares for it;
/// a missing, extra, mistyped or misshapen array is an opval::error naming the input.
std::map<std::string, value, std::less<>> bind_inputs(const model& m, std::span<const array_data> arrays);

/// Every value of a run as arrays ("<f8" for floating-point values, exact; "<i8" for integers,
/// "|b1" for booleans), named after the values, for an .npz file or Python.
std::vector<array_data> arrays_of(const reference_run& run);

/// `opval graph info`: the model's header, each node (op type, role, the opval op it becomes or
/// why not) and the count of each role.
void print_model(const model& m, std::ostream& out);

/// `opval graph reference`: runs the fp64 graph reference of the model at `path` on the arrays
/// of `input_files`, prints each graph output (type, shape, range) and, with `verbose`, each
/// node's role and opval descriptor; saves every value to `save` (an .npz) unless empty.
/// Returns the exit code (0); bad input throws opval::error.
int reference_command(const std::string& path, const std::vector<std::string>& input_files, const std::string& save,
                      bool verbose, std::ostream& out);

/// The values of arrays as the user holds them (opval/judge.hpp's array_data), decoded
/// exactly; an unknown element type is an opval::error naming the array.
value value_of(dtype type, const dims& shape, std::span<const std::byte> bytes, std::string_view name);

/// A value as a contiguous f64 opval tensor (every element exact), as opval's references take it.
tensor to_tensor(const value& v);

}  // namespace opval::graph
