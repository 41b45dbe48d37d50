// The fp64 graph reference (opval/graph.hpp): structural ops give exactly what the ONNX
// specification says; op nodes become the opval problem of the values they receive and give
// its fp64 reference; what opval cannot run is named, or taken from what a stack gave.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>

#include "graph_testing.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

using testing::model_builder;
using testing::values;
using value_map = std::map<std::string, graph::value, std::less<>>;

std::vector<double> iota(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = double(i);
  return v;
}

graph::value run_one(const model_builder& b, const value_map& inputs, const std::string& out = "y") {
  return graph::run_reference(b.build(), inputs).values.at(out);
}

std::string error_of(const model_builder& b, const value_map& inputs) {
  try {
    graph::run_reference(b.build(), inputs);
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

TEST(GraphStructural, TransposeReshapeFlattenMoveElementsExactly) {
  model_builder b;
  b.input("x", {2, 3}).ints("shape", {2}, {3, -1}).output("y").output("t").output("f");
  b.node("Transpose", {"x"}, {"t"});
  b.node("Reshape", {"t", "shape"}, {"y"});
  testing::set_int(b.node("Flatten", {"x"}, {"f"}), "axis", 0);
  const auto run = graph::run_reference(b.build(), {{"x", values({2, 3}, iota(6))}});
  EXPECT_EQ(run.values.at("t").shape, (dims{3, 2}));
  EXPECT_EQ(run.values.at("t").data, (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(run.values.at("y").shape, (dims{3, 2}));
  EXPECT_EQ(run.values.at("f").shape, (dims{1, 6}));
  EXPECT_EQ(run.nodes[0].role, graph::node_role::structural);
}

TEST(GraphStructural, SliceClampsAndStepsBackwardsAsOnnxSays) {
  model_builder b;
  b.input("x", {10}).ints("s", {1}, {8}).ints("e", {1}, {1}).ints("a", {1}, {0}).ints("st", {1}, {-3});
  b.ints("s2", {1}, {2}).ints("e2", {1}, {LLONG_MAX}).output("y").output("z");
  b.node("Slice", {"x", "s", "e", "a", "st"}, {"y"});
  b.node("Slice", {"x", "s2", "e2"}, {"z"});
  const auto run = graph::run_reference(b.build(), {{"x", values({10}, iota(10))}});
  EXPECT_EQ(run.values.at("y").data, (std::vector<double>{8, 5, 2}));
  EXPECT_EQ(run.values.at("z").data, (std::vector<double>{2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(GraphStructural, GatherTakesNegativeIndicesAndScalarIndicesDropTheAxis) {
  model_builder b;
  b.input("x", {3, 2}).ints("rows", {2}, {-1, 0}).ints("col", {}, {1}).output("y").output("z");
  b.node("Gather", {"x", "rows"}, {"y"});
  testing::set_int(b.node("Gather", {"x", "col"}, {"z"}), "axis", 1);
  const auto run = graph::run_reference(b.build(), {{"x", values({3, 2}, iota(6))}});
  EXPECT_EQ(run.values.at("y").shape, (dims{2, 2}));
  EXPECT_EQ(run.values.at("y").data, (std::vector<double>{4, 5, 0, 1}));
  EXPECT_EQ(run.values.at("z").shape, (dims{3}));
  EXPECT_EQ(run.values.at("z").data, (std::vector<double>{1, 3, 5}));
  model_builder bad;
  bad.input("x", {3, 2}).ints("rows", {1}, {3}).output("y");
  bad.node("Gather", {"x", "rows"}, {"y"}, "g");
  EXPECT_NE(error_of(bad, {{"x", values({3, 2}, iota(6))}}).find("node 'g' (Gather): index 3 is outside [-3, 3)"),
            std::string::npos);
}

TEST(GraphStructural, ConcatSplitSqueezeUnsqueezeExpandShape) {
  model_builder b(18);
  b.input("a", {1, 2}).input("c", {2, 2}).ints("sq", {1}, {0}).ints("usq", {2}, {0, -1}).ints("to", {3}, {2, 1, 2});
  b.output("cat").output("p").output("q").output("s").output("u").output("e").output("shape");
  testing::set_int(b.node("Concat", {"a", "c"}, {"cat"}), "axis", 0);
  testing::set_int(b.node("Split", {"cat"}, {"p", "q"}), "num_outputs", 2);
  b.node("Squeeze", {"a", "sq"}, {"s"});
  b.node("Unsqueeze", {"s", "usq"}, {"u"});
  b.node("Expand", {"a", "to"}, {"e"});
  testing::set_int(b.node("Shape", {"cat"}, {"shape"}), "start", -1);
  const auto run = graph::run_reference(b.build(), {{"a", values({1, 2}, {7, 8})}, {"c", values({2, 2}, {1, 2, 3, 4})}});
  EXPECT_EQ(run.values.at("cat").data, (std::vector<double>{7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(run.values.at("p").shape, (dims{2, 2}));  // opset 18: ceil(3 / 2) rows, then the rest
  EXPECT_EQ(run.values.at("q").data, (std::vector<double>{3, 4}));
  EXPECT_EQ(run.values.at("s").shape, (dims{2}));
  EXPECT_EQ(run.values.at("u").shape, (dims{1, 2, 1}));
  EXPECT_EQ(run.values.at("e").shape, (dims{2, 1, 2}));
  EXPECT_EQ(run.values.at("e").data, (std::vector<double>{7, 8, 7, 8}));
  EXPECT_EQ(run.values.at("shape").type, dtype::i64);
  EXPECT_EQ(run.values.at("shape").data, (std::vector<double>{2}));
}

TEST(GraphStructural, CastsToIntegersTruncateAndSaturateAndCastsBetweenFloatsAreTheOpCast) {
  model_builder b;
  b.input("x", {4}).output("i8", onnx::TensorProto::INT8).output("flag", onnx::TensorProto::BOOL).output("h", 10);
  testing::set_int(b.node("Cast", {"x"}, {"i8"}), "to", onnx::TensorProto::INT8);
  testing::set_int(b.node("Cast", {"x"}, {"flag"}), "to", onnx::TensorProto::BOOL);
  testing::set_int(b.node("Cast", {"x"}, {"h"}), "to", onnx::TensorProto::FLOAT16);
  const auto run = graph::run_reference(b.build(), {{"x", values({4}, {-1.7, 2.5, 300, 0})}});
  EXPECT_EQ(run.values.at("i8").data, (std::vector<double>{-1, 2, 127, 0}));
  EXPECT_EQ(run.values.at("flag").data, (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(run.nodes[0].role, graph::node_role::structural);
  ASSERT_EQ(run.nodes[2].role, graph::node_role::op);
  EXPECT_EQ(run.nodes[2].prob->to_string(), "cast shape=4 dt=f32:f32:f16");
  EXPECT_EQ(run.values.at("h").type, dtype::f16);
}

TEST(GraphOps, MatMulOfVectorsAndBatchesIsOpvalsMatmulShapedAsNumpy) {
  model_builder b;
  b.input("v", {3}).input("m", {3, 2}).input("batch", {2, 1, 2, 3}).output("vm").output("bm");
  b.node("MatMul", {"v", "m"}, {"vm"});
  b.node("MatMul", {"batch", "m"}, {"bm"});
  const auto run = graph::run_reference(
      b.build(), {{"v", values({3}, {1, 2, 3})}, {"m", values({3, 2}, iota(6))}, {"batch", values({2, 1, 2, 3}, iota(12))}});
  EXPECT_EQ(run.values.at("vm").shape, (dims{2}));
  EXPECT_EQ(run.values.at("vm").data, (std::vector<double>{16, 22}));  // [1 2 3] . [[0 1] [2 3] [4 5]]
  EXPECT_EQ(run.values.at("bm").shape, (dims{2, 1, 2, 2}));
  EXPECT_EQ(run.values.at("bm").data[3], 3 * 1 + 4 * 3 + 5 * 5.0);
  ASSERT_TRUE(run.nodes[0].prob);
  EXPECT_EQ(run.nodes[0].prob->to_string(), "matmul n=2 k=3 dt=f32:f32:f32");
}

TEST(GraphOps, GemmTransposesScalesAndBroadcastsC) {
  model_builder b(13);
  b.input("a", {3, 2}).input("w", {2, 3}).floats("c", {2}, {10, 20}).output("y");
  auto& n = b.node("Gemm", {"a", "w", "c"}, {"y"});
  testing::set_int(n, "transA", 1);
  testing::set_int(n, "transB", 1);
  testing::set_float(n, "alpha", 2);
  testing::set_float(n, "beta", 0.5);
  // A^T = [[0 2 4] [1 3 5]], B^T = [[0 3] [1 4] [2 5]]: A^T B^T = [[10 28] [13 40]].
  const auto y = run_one(b, {{"a", values({3, 2}, iota(6))}, {"w", values({2, 3}, iota(6))}});
  EXPECT_EQ(y.data, (std::vector<double>{2 * 10 + 5, 2 * 28 + 10, 2 * 13 + 5, 2 * 40 + 10}));
}

TEST(GraphOps, SubIsAddOfTheNegationAndSoftmaxBeforeOpset13SeesAMatrix) {
  model_builder b(11);
  b.input("a", {2}).input("x", {2, 2, 2}).floats("h", {1}, {0.5f}).output("d").output("s");
  b.node("Sub", {"a", "h"}, {"d"});
  b.node("Softmax", {"x"}, {"s"});  // opset 11, axis 1: rows of 4
  const auto run = graph::run_reference(b.build(), {{"a", values({2}, {1, 2})}, {"x", values({2, 2, 2}, iota(8))}});
  EXPECT_EQ(run.values.at("d").data, (std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(run.nodes[0].prob->op(), "add");
  const auto& s = run.values.at("s");
  EXPECT_EQ(s.shape, (dims{2, 2, 2}));
  double row = 0, denominator = 0;
  for (int i = 0; i < 4; ++i) row += s.data[i], denominator += std::exp(double(i));
  EXPECT_NEAR(row, 1.0, 1e-15);
  EXPECT_NEAR(s.data[3], std::exp(3.0) / denominator, 1e-15);
}

TEST(GraphOps, LayerNormalizationGivesItsStatisticsToo) {
  model_builder b(17);
  b.input("x", {2, 2}).floats("g", {2}, {1, 1}).output("y").output("mean").output("inv");
  testing::set_float(b.node("LayerNormalization", {"x", "g"}, {"y", "mean", "inv"}), "epsilon", 0);
  const auto run = graph::run_reference(b.build(), {{"x", values({2, 2}, {1, 3, 0, 4})}});
  EXPECT_EQ(run.values.at("y").data, (std::vector<double>{-1, 1, -1, 1}));
  EXPECT_EQ(run.values.at("mean").shape, (dims{2, 1}));
  EXPECT_EQ(run.values.at("mean").data, (std::vector<double>{2, 2}));
  EXPECT_EQ(run.values.at("inv").data, (std::vector<double>{1, 0.5}));
  EXPECT_EQ(run.nodes[0].prob->to_string(), "layer_norm shape=2x2 eps=0 dt=f32:f32:f32");
}

TEST(GraphOps, ConvWithSameUpperPaddingPadsTheEnd) {
  model_builder b(11);
  b.input("x", {1, 1, 3, 3}).floats("w", {1, 1, 2, 2}, {1, 1, 1, 1}).output("y");
  testing::set_text(b.node("Conv", {"x", "w"}, {"y"}), "auto_pad", "SAME_UPPER");
  const auto run = graph::run_reference(b.build(), {{"x", values({1, 1, 3, 3}, iota(9))}});
  const auto& y = run.values.at("y");
  EXPECT_EQ(y.shape, (dims{1, 1, 3, 3}));
  EXPECT_EQ(y.data[0], 0 + 1 + 3 + 4);
  EXPECT_EQ(y.data[8], 8);  // the last window sees x[2,2] and the padding
  EXPECT_EQ(run.nodes[0].prob->get_int("pb"), 1);
  EXPECT_EQ(run.nodes[0].prob->get_int("pt"), 0);
}

TEST(GraphOps, AnMlpEndToEndIsItsFp64Arithmetic) {
  model_builder b(13);
  b.input("x", {2, 3}).floats("w1", {3, 2}, {0.5f, -1, 2, 0.25f, -0.5f, 1}).floats("b1", {2}, {0.125f, -4});
  b.floats("w2", {2, 2}, {1, -1, 0.5f, 2}).output("y");
  b.node("MatMul", {"x", "w1"}, {"h"});
  b.node("Add", {"h", "b1"}, {"hb"});
  b.node("Relu", {"hb"}, {"r"});
  b.node("MatMul", {"r", "w2"}, {"logits"});
  b.node("Softmax", {"logits"}, {"y"});
  const std::vector<double> x{1, 2, 3, -1, 0.5, 2};
  const std::vector<double> w1{0.5, -1, 2, 0.25, -0.5, 1}, b1{0.125, -4}, w2{1, -1, 0.5, 2};
  const auto y = run_one(b, {{"x", values({2, 3}, x)}});
  for (int r = 0; r < 2; ++r) {
    double h[2], l[2];
    for (int j = 0; j < 2; ++j) {
      h[j] = b1[j];
      for (int k = 0; k < 3; ++k) h[j] += x[r * 3 + k] * w1[k * 2 + j];
      h[j] = std::max(h[j], 0.0);
    }
    for (int j = 0; j < 2; ++j) l[j] = h[0] * w2[j] + h[1] * w2[2 + j];
    const double m = std::max(l[0], l[1]), d = std::exp(l[0] - m) + std::exp(l[1] - m);
    EXPECT_NEAR(y.data[r * 2], std::exp(l[0] - m) / d, 1e-15);
    EXPECT_NEAR(y.data[r * 2 + 1], std::exp(l[1] - m) / d, 1e-15);
  }
}

TEST(GraphNodes, MapNodeSaysWhatEachNodeBecomes) {
  model_builder b(20);
  b.input("x", {2}).output("y");
  b.node("Sqrt", {"x"}, {"e"});
  b.node("Gelu", {"e"}, {"y"});
  auto& q = b.node("Cast", {"x"}, {"i"});
  testing::set_int(q, "to", onnx::TensorProto::INT32);
  const graph::model m = b.build();
  EXPECT_EQ(graph::map_node(m, m.nodes[0]).role, graph::node_role::unsupported);
  EXPECT_NE(graph::map_node(m, m.nodes[0]).reason.find("opval maps no op to ONNX's Sqrt"), std::string::npos);
  EXPECT_EQ(graph::map_node(m, m.nodes[1]).op, "gelu");
  EXPECT_EQ(graph::map_node(m, m.nodes[2]).role, graph::node_role::structural);
}

TEST(GraphNodes, AnUnsupportedNodeIsNamedUnlessAStackGaveItsOutputs) {
  model_builder b(17);
  b.input("x", {2}).output("y");
  b.node("Sqrt", {"x"}, {"e"}, "the_sqrt");
  b.node("Relu", {"e"}, {"y"});
  const graph::model m = b.build();
  EXPECT_NE(error_of(b, {{"x", values({2}, {1, 2})}}).find("node 'the_sqrt' (Sqrt): opval maps no op to ONNX's Sqrt"),
            std::string::npos);
  const auto run = graph::run_reference(m, {{"x", values({2}, {1, 2})}}, {{"e", values({2}, {-0.5, 0.75})}});
  EXPECT_TRUE(run.nodes[0].given);
  EXPECT_EQ(run.values.at("y").data, (std::vector<double>{0, 0.75}));
}

TEST(GraphNodes, AttributesOutsideWhatTheOpTakesAreErrorsNamingTheNode) {
  model_builder b(12);
  b.input("x", {1, 1, 4, 4}).output("y").output("idx", onnx::TensorProto::INT64);
  auto& n = b.node("MaxPool", {"x"}, {"y", "idx"}, "pool");
  testing::set_ints(n, "kernel_shape", {2, 2});
  EXPECT_NE(error_of(b, {{"x", values({1, 1, 4, 4}, iota(16))}}).find("node 'pool' (MaxPool): it asks for the Indices"),
            std::string::npos);
  model_builder c(13);
  c.input("a", {2, 3}).input("b", {2, 3}).output("y");
  c.node("MatMul", {"a", "b"}, {"y"}, "mm");
  EXPECT_NE(error_of(c, {{"a", values({2, 3}, iota(6))}, {"b", values({2, 3}, iota(6))}})
                .find("node 'mm' (MatMul): A 2x3 and B 2x3 do not multiply"),
            std::string::npos);
}

TEST(GraphNodes, AValueTooLargeForTheMachineIsAnErrorBeforeAnyAllocation) {
  model_builder b;
  b.input("x", {1}).ints("huge", {2}, {1 << 20, 1 << 20}).output("y").output("z");
  b.node("ConstantOfShape", {"huge"}, {"y"}, "fill");
  b.node("Expand", {"x", "huge"}, {"z"}, "grow");
  const std::string e = error_of(b, {{"x", values({1}, {1})}});
  EXPECT_NE(e.find("node 'fill' (ConstantOfShape): a value of shape 1048576x1048576 (1099511627776 elements) is larger than the graph reference holds"),
            std::string::npos)
      << e;
}

TEST(GraphInputs, InputsAreCheckedAgainstTheirDeclaration) {
  model_builder b;
  b.input("x", {-1, 2}).output("y");
  b.node("Relu", {"x"}, {"y"});
  EXPECT_NE(error_of(b, {}).find("graph input 'x' was not given"), std::string::npos);
  EXPECT_NE(error_of(b, {{"x", values({3}, {1, 2, 3})}}).find("graph input 'x' is declared [-1,2], and was given 3"),
            std::string::npos);
  EXPECT_NE(error_of(b, {{"x", values({1, 2}, {1, 2}, dtype::f16)}}).find("declared f32, and was given f16"),
            std::string::npos);
  EXPECT_NE(error_of(b, {{"x", values({1, 2}, {1, 2})}, {"z", values({1}, {1})}}).find("'z' was given, and is no graph input"),
            std::string::npos);
  EXPECT_EQ(run_one(b, {{"x", values({3, 2}, {-1, 1, -2, 2, -3, 3})}}).data, (std::vector<double>{0, 1, 0, 2, 0, 3}));
}

TEST(GraphInputs, ArraysBindByNameAsTheDeclaredTypeAndEveryValueSavesAsAnArray) {
  model_builder b;
  b.input("x", {-1}).output("y");
  b.node("Relu", {"x"}, {"y"});
  const graph::model m = b.build();
  const float data[2] = {-1.5f, 2.5f};
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  const std::vector<array_data> arrays{{"x", "<f4", {2}, std::vector<std::byte>(bytes, bytes + sizeof data)}};
  const auto inputs = graph::bind_inputs(m, arrays);
  EXPECT_EQ(inputs.at("x").data, (std::vector<double>{-1.5, 2.5}));
  const auto run = graph::run_reference(m, inputs);
  const auto saved = graph::arrays_of(run);
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[1].name, "y");
  EXPECT_EQ(saved[1].type, "<f8");
  EXPECT_EQ(saved[1].bytes.size(), 16u);
  const std::vector<array_data> wrong{{"x", "<f8", {2}, std::vector<std::byte>(16)}};
  EXPECT_THROW(graph::bind_inputs(m, wrong), error);
}

}  // namespace
}  // namespace opval
