#pragma once
// ONNX compute nodes as opval ops: for each op type opval maps, the problem (attributes and
// contract from the node's attributes and the values it receives) and its operands, prepared
// exactly (an ONNX Gemm's transposed A handed over in logical order, a Sub's b negated, a
// Scale broadcast to the normalized dims) so that the op's fp64 reference and error bound
// apply to the node as it is.
#include <optional>
#include <string_view>
#include <vector>

#include "graph/node_context.hpp"
#include "opval/problem.hpp"

namespace opval::graph {

/// A node as an opval op on the values it received.
struct op_call {
  /// The problem; nullopt when the node needs no arithmetic on these values (a Reduce over no
  /// axes with noop_with_empty_axes): `exact` is then its whole output.
  std::optional<problem> prob;
  /// The problem's inputs, in its operand order.
  std::vector<value> operands;
  /// The ONNX shape of each of the problem's outputs where it differs from the problem's, e.g.
  /// a MatMul of a vector drops the extent-1 row opval's matmul has (nullopt: the problem's).
  std::vector<std::optional<dims>> result_shapes;
  /// The element type of the problem's outputs in the graph.
  dtype result_type = dtype::f32;
  /// The outputs rounded to result_type (RNE, `result_overflow`) after the op's reference: a
  /// Cast's meaning in the model, which what follows receives (the cast op's own reference is
  /// unrounded, its bound covering the rounding).
  bool rounds_to_result_type = false;
  overflow result_overflow = overflow::ieee;
  /// Outputs computed exactly beside the op's, after them (LayerNormalization's Mean and
  /// InvStdDev), or the whole output when there is no problem.
  std::vector<value> exact;
};

/// Maps one node on its inputs; nullopt when the node is, on these values, no op but a
/// structural conversion (a Cast from or to an integer type). Throws opval::error naming the
/// node when its attributes or values are outside what the op supports.
using op_mapper = std::optional<op_call> (*)(const node_context&);

/// The mapper of a default-domain op type and the opval op it becomes, or nullptr.
struct mapped_op {
  std::string_view op_type;
  std::string_view opval_op;
  op_mapper mapper;
};
const mapped_op* find_mapped_op(const node& n);

/// The problem's input tensors (of its operands' types and shapes) holding the call's operands.
std::vector<tensor> input_tensors(const op_call& call);

/// Every ONNX op type mapped to an opval op (for docs/GRAPH.md and `opval graph info`).
const std::vector<mapped_op>& mapped_ops();

}  // namespace opval::graph
