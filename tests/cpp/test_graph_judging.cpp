// Judging a stack's run node by node (opval/graph.hpp): the graph run on opval's backends, each
// node judged on the inputs that run gave it. A correct backend blames nothing; a perturbed
// kernel in one node is blamed alone, the nodes after it inheriting its error and passing.
#include <gtest/gtest.h>

#include "backend_testing.hpp"
#include "graph_testing.hpp"
#include "opval/backend.hpp"
#include "opval/graph.hpp"

namespace opval {
namespace {

using testing::model_builder;

// `inner`, for the problems of one op only (the others run as opval's contract emulation).
class one_op_backend final : public backend {
 public:
  one_op_backend(std::unique_ptr<backend> inner, std::string op) : inner_(std::move(inner)), op_(std::move(op)) {}
  std::string name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  support supports(const problem& p) const override {
    return p.op() == op_ ? inner_->supports(p) : support::unimplemented("another op");
  }
  void prepare(const problem& p, std::span<const tensor> in, std::span<tensor> out) override { inner_->prepare(p, in, out); }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    return inner_->execute(p, in, out);
  }
  std::optional<double> synchronize(std::span<tensor> out) override { return inner_->synchronize(out); }

 private:
  std::unique_ptr<backend> inner_;
  std::string op_;
};

graph::model small_mlp() {
  model_builder b(17);
  b.input("x", {4, 8});
  std::vector<float> w(8 * 8), bias(8);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = float((int(i * 7) % 11) - 5) / 8.0f;
  for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = float(i) / 16.0f;
  b.floats("w", {8, 8}, w).floats("b", {8}, bias).ints("shape", {2}, {8, 4}).output("y");
  b.node("MatMul", {"x", "w"}, {"h"}, "fc");
  b.node("Add", {"h", "b"}, {"hb"}, "bias");
  b.node("Relu", {"hb"}, {"r"}, "relu");
  b.node("Reshape", {"r", "shape"}, {"t"}, "reshape");
  b.node("Softmax", {"t"}, {"y"}, "softmax");
  return b.build();
}

std::map<std::string, graph::value, std::less<>> inputs() {
  std::vector<double> x(32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double((int(i * 5) % 13) - 6) / 4.0;
  return {{"x", testing::values({4, 8}, x)}};
}

std::vector<std::string> blamed(const std::vector<graph::node_judgement>& js) {
  std::vector<std::string> out;
  for (const auto& j : js)
    if (j.local && is_failure(j.local->v.st)) out.push_back(j.node);
  return out;
}

TEST(GraphJudging, SimRunningEveryNodeBlamesNothing) {
  const graph::model m = small_mlp();
  const auto sim = make_backend("sim");
  const graph::backend_run run = graph::run_on_backend(m, inputs(), *sim);
  EXPECT_EQ(run.ran_on.at("fc"), "sim");
  const auto js = graph::judge_stack(m, inputs(), run.values);
  ASSERT_EQ(js.size(), 5u);
  EXPECT_EQ(blamed(js), std::vector<std::string>{});
  for (const auto& j : js) EXPECT_TRUE(j.local) << j.node << ": " << j.note;
  EXPECT_GT(js.back().accumulated_max_rel, 0);  // f32 arithmetic, accumulated and explained
}

TEST(GraphJudging, APerturbedKernelIsBlamedAloneAndTheNodesAfterItInheritItsError) {
  const graph::model m = small_mlp();
  one_op_backend bad(std::make_unique<testing::perturbing_backend>(make_backend("sim")), "add");
  const graph::backend_run run = graph::run_on_backend(m, inputs(), bad);
  EXPECT_EQ(run.ran_on.at("bias"), "sim_perturbed");
  EXPECT_EQ(run.ran_on.at("fc"), "sim (contract emulation)");
  const auto js = graph::judge_stack(m, inputs(), run.values);
  EXPECT_EQ(blamed(js), std::vector<std::string>{"bias"});
  EXPECT_GT(js[4].accumulated_max_abs, 1e-3);  // the softmax inherits it
}

TEST(GraphJudging, AStructuralNodeThatMovesElementsWronglyIsBlamed) {
  const graph::model m = small_mlp();
  const auto sim = make_backend("sim");
  graph::backend_run run = graph::run_on_backend(m, inputs(), *sim);
  std::swap(run.values.at("t").data[0], run.values.at("t").data[1]);  // a reshape that is not one
  const auto js = graph::judge_stack(m, inputs(), run.values);
  const auto b = blamed(js);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.front(), "reshape");
}

// The sim backend's run with `hidden` removed, as a stack that fused the nodes computing them.
std::map<std::string, graph::value, std::less<>> fused_run(const graph::model& m, std::vector<std::string> hidden) {
  const auto sim = make_backend("sim");
  graph::backend_run run = graph::run_on_backend(m, inputs(), *sim);
  for (const std::string& name : hidden) run.values.erase(name);
  return run.values;
}

TEST(GraphJudging, ANodeWhoseInputsAFusedNodeHidesIsJudgedWithTheNodesItHides) {
  const graph::model m = small_mlp();
  const auto js = graph::judge_stack(m, inputs(), fused_run(m, {"h", "hb"}));  // matmul + add + relu in one
  EXPECT_FALSE(js[0].local);
  EXPECT_FALSE(js[1].local);
  EXPECT_NE(js[1].note.find("the stack gave no 'hb'"), std::string::npos) << js[1].note;
  ASSERT_TRUE(js[2].local) << js[2].note;
  EXPECT_EQ(js[2].local->v.st, state::passed) << js[2].local->v.reason;
  EXPECT_NE(js[2].note.find("the region fc, bias, relu"), std::string::npos) << js[2].note;
  EXPECT_FALSE(js[2].captured);
  EXPECT_TRUE(js[3].local);
}

TEST(GraphJudging, AFusedKernelMoreAccurateThanTheNodesItReplacesPasses) {
  // A fused matmul + add + relu that keeps its sums in double and rounds once: a legitimate
  // fusion (fewer roundings than the nodes it replaces) must not fail.
  const graph::model m = small_mlp();
  auto values = fused_run(m, {"h", "hb"});
  const graph::reference_run exact = graph::run_reference(m, inputs());
  for (std::size_t i = 0; i < values.at("r").data.size(); ++i)
    values.at("r").data[i] = static_cast<float>(exact.values.at("r").data[i]);
  const auto js = graph::judge_stack(m, inputs(), values);
  ASSERT_TRUE(js[2].local);
  EXPECT_EQ(js[2].local->v.st, state::passed) << js[2].local->v.reason;
}

TEST(GraphJudging, AFaultInsideAFusedRegionIsBlamedOnItsOutput) {
  const graph::model m = small_mlp();
  auto values = fused_run(m, {"h", "hb"});
  for (double& v : values.at("r").data) v = static_cast<float>(v * (1 + 1.0 / 1024));  // a wrong constant inside
  const auto js = graph::judge_stack(m, inputs(), values);
  EXPECT_EQ(blamed(js).front(), "relu");
  EXPECT_NE(js[2].local->v.reason.find("beyond the region's bound"), std::string::npos) << js[2].local->v.reason;
}

TEST(GraphJudging, ASoftmaxFusedWithTheElementwiseNodesBeforeItIsJudgedAsOneRegion) {
  // Bias, relu, reshape and softmax in one kernel (the softmax reading values the stack never
  // stores): the region's bound carries the hidden values' bounds through the softmax exactly.
  const graph::model m = small_mlp();
  const auto js = graph::judge_stack(m, inputs(), fused_run(m, {"hb", "r", "t"}));
  ASSERT_TRUE(js[4].local) << js[4].note;
  EXPECT_EQ(js[4].local->v.st, state::passed) << js[4].local->v.reason;
  EXPECT_EQ(js[4].region, (std::vector<std::string>{"bias", "relu", "reshape", "softmax"}));
}

TEST(GraphJudging, AWrongSoftmaxInsideAFusedRegionStillFails) {
  const graph::model m = small_mlp();
  auto values = fused_run(m, {"hb", "r", "t"});
  for (double& v : values.at("y").data) v = static_cast<float>(v * (1 + 1.0 / 4096));  // not normalized: a sum off by 2^-12
  const auto js = graph::judge_stack(m, inputs(), values);
  ASSERT_TRUE(js[4].local) << js[4].note;
  EXPECT_EQ(js[4].local->v.st, state::failed);
  EXPECT_NE(js[4].local->v.reason.find("beyond the region's bound"), std::string::npos) << js[4].local->v.reason;
}

TEST(GraphJudging, ARegionCarryingAHiddenValueThroughANonElementwiseOpIsNotJudgedAndSaysWhy) {
  model_builder b(17);
  b.input("x", {4, 8});
  std::vector<float> w(8 * 8);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = float((int(i * 7) % 11) - 5) / 8.0f;
  b.floats("w", {8, 8}, w).output("y");
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("MatMul", {"r", "w"}, {"y"}, "fc");
  const graph::model m = b.build();
  const auto js = graph::judge_stack(m, inputs(), fused_run(m, {"r"}));  // relu + matmul in one
  EXPECT_FALSE(js[1].local);
  EXPECT_NE(js[1].note.find("through 'fc'"), std::string::npos) << js[1].note;
}

TEST(GraphJudging, ANodeBecomesTheOpLevelCaseThatReplaysIt) {
  const graph::model m = small_mlp();
  const auto sim = make_backend("sim");
  const graph::backend_run run = graph::run_on_backend(m, inputs(), *sim);
  const graph::node_case c = graph::case_of_node(m, "fc", run.values);
  EXPECT_EQ(c.prob.to_string(), "matmul m=4 n=8 k=8 dt=f32:f32:f32");
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[0].first, "A");
  EXPECT_EQ(c.inputs[0].second.shape, (dims{4, 8}));
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].second.data, run.values.at("h").data);
  EXPECT_THROW(graph::case_of_node(m, "reshape", run.values), error);  // structural: no op-level case
  EXPECT_THROW(graph::case_of_node(m, "no_such_node", run.values), error);
}

}  // namespace
}  // namespace opval
