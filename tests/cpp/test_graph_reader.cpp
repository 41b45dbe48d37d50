// The ONNX model reader (opval/graph.hpp): what it keeps of a model, the order it runs nodes
// in, and one clear error for each kind of bad model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "graph_testing.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

using testing::model_builder;

std::string error_of(const model_builder& b) {
  try {
    b.build();
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

TEST(GraphReader, KeepsInputsInitializersNodesAndAttributes) {
  model_builder b(13);
  b.input("x", {-1, 4}).floats("w", {4, 3}, std::vector<float>(12, 0.5f)).output("y");
  auto& n = b.node("Gemm", {"x", "w"}, {"y"}, "fc");
  testing::set_float(n, "alpha", 2.0f);
  testing::set_ints(n, "unused", {1, 2});
  const graph::model m = b.build();
  EXPECT_EQ(m.opset, 13);
  EXPECT_EQ(m.producer, "opval-test");
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].type, dtype::f32);
  EXPECT_EQ(m.inputs[0].shape, (dims{-1, 4}));  // a symbolic extent is -1
  ASSERT_TRUE(m.initializers.contains("w"));
  EXPECT_EQ(m.initializers.at("w").shape, (dims{4, 3}));
  EXPECT_EQ(m.initializers.at("w").data[11], 0.5);
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].name, "fc");
  EXPECT_EQ(m.nodes[0].attrs.at("alpha").f, 2.0);
  EXPECT_EQ(m.nodes[0].attrs.at("unused").ints, (std::vector<std::int64_t>{1, 2}));
}

TEST(GraphReader, AnInitializerListedAsAnInputIsNoGraphInput) {
  model_builder b;
  b.input("x", {2}).input("w", {2}).floats("w", {2}, {1, 2}).output("y");
  b.node("Add", {"x", "w"}, {"y"});
  const graph::model m = b.build();
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].name, "x");
}

TEST(GraphReader, NodesOutOfOrderAreRunAfterTheirProducersAndUnnamedOnesGetNames) {
  model_builder b;
  b.input("x", {2}).output("z");
  b.node("Relu", {"y"}, {"z"});
  b.node("Relu", {"x"}, {"y"});
  const graph::model m = b.build();
  ASSERT_EQ(m.nodes.size(), 2u);
  EXPECT_EQ(m.nodes[0].outputs[0], "y");
  EXPECT_EQ(m.nodes[0].name, "Relu#1");
}

TEST(GraphReader, EachBadModelIsOneErrorNamingThePart) {
  {
    model_builder b;
    b.input("x", {2}).output("y");
    b.node("Relu", {"nothing"}, {"y"}, "r");
    EXPECT_NE(error_of(b).find("node 'r' (Relu) reads 'nothing', which no node, graph input or initializer gives"),
              std::string::npos)
        << error_of(b);
  }
  {
    model_builder b;
    b.input("x", {2}).output("y");
    b.node("Add", {"x", "z"}, {"y"}, "a");
    b.node("Relu", {"y"}, {"z"}, "b");
    EXPECT_NE(error_of(b).find("cycle"), std::string::npos) << error_of(b);
  }
  {
    model_builder b;
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"});
    b.node("Relu", {"x"}, {"y"});
    EXPECT_NE(error_of(b).find("value 'y' is produced twice"), std::string::npos) << error_of(b);
  }
  {
    model_builder b;
    b.input("x", {2}).output("nowhere");
    EXPECT_NE(error_of(b).find("graph output 'nowhere' is produced by nothing"), std::string::npos) << error_of(b);
  }
  {
    model_builder b;
    b.input("x", {2}, 8 /* STRING */).output("x");
    EXPECT_NE(error_of(b).find("graph value 'x' has ONNX element type 8, none opval has"), std::string::npos)
        << error_of(b);
  }
  {
    model_builder b;
    b.input("x", {2}).output("y");
    auto* t = b.proto().mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    b.node("Relu", {"x"}, {"y"});
    EXPECT_NE(error_of(b).find("initializer 'w': tensor 'w' keeps its data in an external file"), std::string::npos)
        << error_of(b);
  }
  {
    model_builder b;
    b.input("x", {2}).floats("w", {3}, {1, 2}).output("x");
    EXPECT_NE(error_of(b).find("holds 8 bytes of data for shape [3]"), std::string::npos) << error_of(b);
  }
  {
    model_builder b;
    b.proto().clear_opset_import();
    EXPECT_NE(error_of(b).find("imports no opset of the default ONNX domain"), std::string::npos) << error_of(b);
  }
}

TEST(GraphReader, AFileThatIsNoModelIsOneErrorNamingTheFile) {
  const std::string junk = "\x08\x96\x01 this is not a protobuf \xff\xff\xff";
  try {
    graph::parse_onnx(std::as_bytes(std::span(junk.data(), junk.size())), "junk.onnx");
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(std::string(e.what()), "junk.onnx: it is no ONNX model (the protobuf does not parse)");
  }
  const auto dir = std::filesystem::temp_directory_path();
  EXPECT_THROW(graph::read_onnx(dir.string()), error);
  EXPECT_THROW(graph::read_onnx((dir / "no_such_model.onnx").string()), error);
  EXPECT_THROW(graph::parse_onnx({}, "empty.onnx"), error);  // parses as an empty message: no graph
}

}  // namespace
}  // namespace opval
