#pragma once
// Building ONNX models in a test, with the same protobuf classes the reader uses: inputs,
// initializers, nodes and outputs, serialized and read back through parse_onnx.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "opval/graph.hpp"

namespace opval::testing {

class model_builder {
 public:
  explicit model_builder(std::int64_t opset = 17) {
    proto_.set_ir_version(8);
    proto_.set_producer_name("opval-test");
    auto* o = proto_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    proto_.mutable_graph()->set_name("test");
  }

  model_builder& input(const std::string& name, std::vector<std::int64_t> shape, int type = onnx::TensorProto::FLOAT) {
    describe(proto_.mutable_graph()->add_input(), name, shape, type);
    return *this;
  }
  model_builder& output(const std::string& name, int type = onnx::TensorProto::FLOAT) {
    auto* v = proto_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    return *this;
  }
  model_builder& floats(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& data) {
    auto* t = proto_.mutable_graph()->add_initializer();
    fill(t, name, shape, onnx::TensorProto::FLOAT);
    for (float x : data) t->add_float_data(x);
    return *this;
  }
  model_builder& ints(const std::string& name, std::vector<std::int64_t> shape, const std::vector<std::int64_t>& data) {
    auto* t = proto_.mutable_graph()->add_initializer();
    fill(t, name, shape, onnx::TensorProto::INT64);
    for (std::int64_t x : data) t->add_int64_data(x);
    return *this;
  }
  /// A node; returns it for attributes.
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                        const std::string& name = "") {
    auto* n = proto_.mutable_graph()->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  onnx::ModelProto& proto() { return proto_; }
  std::string bytes() const { return proto_.SerializeAsString(); }
  graph::model build() const {
    const std::string b = bytes();
    return graph::parse_onnx(std::as_bytes(std::span(b.data(), b.size())), "test.onnx");
  }

 private:
  static void describe(onnx::ValueInfoProto* v, const std::string& name, const std::vector<std::int64_t>& shape,
                       int type) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (std::int64_t d : shape) {
      if (d < 0) t->mutable_shape()->add_dim()->set_dim_param("n");
      else t->mutable_shape()->add_dim()->set_dim_value(d);
    }
  }
  static void fill(onnx::TensorProto* t, const std::string& name, const std::vector<std::int64_t>& shape, int type) {
    t->set_name(name);
    t->set_data_type(type);
    for (std::int64_t d : shape) t->add_dims(d);
  }

  onnx::ModelProto proto_;
};

inline void set_int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void set_float(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void set_ints(onnx::NodeProto& n, const std::string& name, std::initializer_list<std::int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (std::int64_t x : v) a->add_ints(x);
}
inline void set_text(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

/// A value of type f32 (or `type`) holding `data`.
inline graph::value values(std::vector<std::int64_t> shape, std::vector<double> data, dtype type = dtype::f32) {
  return graph::value{type, std::move(shape), std::move(data)};
}

}  // namespace opval::testing
