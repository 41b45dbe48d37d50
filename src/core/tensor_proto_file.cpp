// Arrays from ONNX TensorProto files (.pb: one serialized onnx.TensorProto, as ONNX's test
// data and onnx.numpy_helper write them), read with Debian's ONNX protobuf classes.
#include "core/tensor_proto_file.hpp"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/size_product.hpp"
#include "opval/error.hpp"

namespace opval::detail {
namespace {

// Each value's low `size` bytes, little-endian: ONNX keeps small types (and the bits of f16,
// bf16 and fp8) one per int32 field entry when it does not use raw_data.
template <class Values>
std::vector<std::byte> packed(const Values& values, std::size_t size) {
  std::vector<std::byte> out(static_cast<std::size_t>(values.size()) * size);
  std::size_t at = 0;
  for (const auto v : values) {
    std::memcpy(out.data() + at, &v, size);  // the low bytes: x86-64 and ONNX are little-endian
    at += size;
  }
  return out;
}

std::vector<std::byte> typed_data(const onnx::TensorProto& t, dtype type) {
  const std::size_t size = static_cast<std::size_t>(traits(type).size_bytes);
  switch (type) {
    case dtype::f32: return packed(t.float_data(), size);
    case dtype::f64: return packed(t.double_data(), size);
    case dtype::i64: return packed(t.int64_data(), size);
    default: return packed(t.int32_data(), size);
  }
}

}  // namespace

// ONNX's TensorProto.DataType numbers (onnx.proto) of the types opval has; the float8 ones
// postdate the ONNX these headers come from, so they are numbers here.
std::optional<dtype> opval_type(int onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return dtype::f32;
    case onnx::TensorProto::UINT8: return dtype::u8;
    case onnx::TensorProto::INT8: return dtype::i8;
    case onnx::TensorProto::INT32: return dtype::i32;
    case onnx::TensorProto::INT64: return dtype::i64;
    case onnx::TensorProto::BOOL: return dtype::boolean;
    case onnx::TensorProto::FLOAT16: return dtype::f16;
    case onnx::TensorProto::DOUBLE: return dtype::f64;
    case onnx::TensorProto::BFLOAT16: return dtype::bf16;
    case 17: return dtype::f8_e4m3;  // FLOAT8E4M3FN
    case 19: return dtype::f8_e5m2;  // FLOAT8E5M2
    case 18: return dtype::f8_e4m3fnuz;  // FLOAT8E4M3FNUZ
    case 20: return dtype::f8_e5m2fnuz;  // FLOAT8E5M2FNUZ
    case 24: return dtype::f8_e8m0;      // FLOAT8E8M0
    // INT4, UINT4 and FLOAT4E2M1 (22, 21, 23) are packed two per byte in ONNX; opval keeps one
    // per byte, so they are refused here rather than misread.
    default: return std::nullopt;
  }
}

array_data array_of(const onnx::TensorProto& t, const std::string& fallback_name) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw error(fmt::format("tensor '{}' keeps its data in an external file, which opval does not read", t.name()));
  const std::optional<dtype> type = opval_type(t.data_type());
  if (!type) throw error(fmt::format("tensor '{}' has ONNX element type {}, none opval has", t.name(), t.data_type()));
  array_data a;
  a.name = t.name().empty() ? fallback_name : t.name();
  a.type = std::string(to_string(*type));
  for (const std::int64_t d : t.dims()) {
    if (d < 0) throw error(fmt::format("tensor '{}' has the extent {}", a.name, d));
    a.shape.push_back(d);
  }
  a.bytes = t.has_raw_data() ? std::vector<std::byte>(reinterpret_cast<const std::byte*>(t.raw_data().data()),
                                                      reinterpret_cast<const std::byte*>(t.raw_data().data()) +
                                                          t.raw_data().size())
                             : typed_data(t, *type);
  const auto expected = size_product(element_count(a.shape), traits(*type).size_bytes, a.shape);
  if (static_cast<std::int64_t>(a.bytes.size()) != expected)
    throw error(fmt::format("tensor '{}' holds {} bytes of data for shape [{}] of {} ({} bytes)", a.name,
                            a.bytes.size(), fmt::join(a.shape, ","), a.type, expected));
  return a;
}

std::vector<array_data> read_tensor_proto(const std::string& path, const std::string& stem) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto t;
  if (!in || !t.ParseFromIstream(&in)) throw error("it is no serialized ONNX TensorProto");
  std::vector<array_data> one;
  one.push_back(array_of(t, stem));
  return one;
}

}  // namespace opval::detail
