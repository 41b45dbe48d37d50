#pragma once
// ONNX TensorProto files for judge() (docs/JUDGE.md); kept apart so that only this file sees
// the protobuf headers.
#include <optional>
#include <string>
#include <vector>

#include "opval/judge.hpp"

namespace onnx {
class TensorProto;
}

namespace opval::detail {

/// The opval type of an ONNX TensorProto.DataType number, if opval has one.
std::optional<dtype> opval_type(int onnx_type);

/// The array a TensorProto holds (a file's, a model's initializer or constant), named by the
/// tensor's name (`fallback_name` when it has none), typed by the opval name of its ONNX
/// element type. Throws opval::error naming the tensor.
array_data array_of(const onnx::TensorProto& t, const std::string& fallback_name);

/// The one array of a serialized onnx.TensorProto at `path`, named by the tensor's name (the
/// file's `stem` when it has none), typed by the opval name of its ONNX element type. Throws
/// opval::error (without the path, which the caller adds).
std::vector<array_data> read_tensor_proto(const std::string& path, const std::string& stem);

}  // namespace opval::detail
