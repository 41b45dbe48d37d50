#pragma once
// ONNX TensorProto files for judge() (docs/JUDGE.md); kept apart so that only this file sees
// the protobuf headers.
#include <string>
#include <vector>

#include "opval/judge.hpp"

namespace opval::detail {

/// The one array of a serialized onnx.TensorProto at `path`, named by the tensor's name (the
/// file's `stem` when it has none), typed by the opval name of its ONNX element type. Throws
/// opval::error (without the path, which the caller adds).
std::vector<array_data> read_tensor_proto(const std::string& path, const std::string& stem);

}  // namespace opval::detail
