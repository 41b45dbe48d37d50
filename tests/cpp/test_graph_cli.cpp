// `opval graph info` and `opval graph reference` on a model written to a file: the node table,
// the outputs' summary and every value saved to an .npz that reads back exactly.
#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli_testing.hpp"
#include "core/array_files.hpp"
#include "graph_testing.hpp"

#ifndef OPVAL_CLI_PATH
#error "tests/cpp/CMakeLists.txt must define OPVAL_CLI_PATH for test_graph_cli"
#endif

namespace opval {
namespace {

namespace fs = std::filesystem;

class GraphCli : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::model_builder b(17);
    b.input("x", {2, 2}).floats("w", {2, 2}, {1, 2, 3, 4}).output("y");
    b.node("MatMul", {"x", "w"}, {"h"}, "mm");
    b.node("Transpose", {"h"}, {"t"}, "tr");
    b.node("Sqrt", {"t"}, {"e"}, "sqrt");
    b.node("Relu", {"t"}, {"y"}, "relu");
    std::ofstream(dir_ / "with_sqrt.onnx", std::ios::binary) << b.bytes();
    testing::model_builder ok(17);
    ok.input("x", {2, 2}).floats("w", {2, 2}, {1, 2, 3, 4}).output("y");
    ok.node("MatMul", {"x", "w"}, {"h"}, "mm");
    ok.node("Transpose", {"h"}, {"y"}, "tr");
    std::ofstream(dir_ / "model.onnx", std::ios::binary) << ok.bytes();
    const float x[4] = {1, 0, 0, -1};
    const auto* bytes = reinterpret_cast<const std::byte*>(x);
    const std::vector<array_data> in{{"x", "<f4", {2, 2}, std::vector<std::byte>(bytes, bytes + sizeof x)}};
    write_npz((dir_ / "in.npz").string(), in);
  }

  testing::scratch_dir scratch_{"opval_test_graph_cli"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(GraphCli, InfoListsEachNodeAndWhatItBecomes) {
  const testing::cli_result r = testing::run_cli(OPVAL_CLI_PATH, dir_, {"graph", "info", "with_sqrt.onnx"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("matmul"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("opval maps no op to ONNX's Sqrt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes: 2 op, 1 structural, 1 unsupported (Sqrt)"), std::string::npos) << r.out;
}

TEST_F(GraphCli, ReferenceSavesEveryValueExactly) {
  const testing::cli_result r = testing::run_cli(
      OPVAL_CLI_PATH, dir_, {"graph", "reference", "model.onnx", "--inputs", "in.npz", "--save", "ref.npz", "-v"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("matmul m=2 n=2 k=2 dt=f32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("saved 4 values"), std::string::npos) << r.out;
  const std::vector<array_data> saved = read_array_file((dir_ / "ref.npz").string());
  const auto y = std::ranges::find_if(saved, [](const array_data& a) { return a.name == "y"; });
  ASSERT_NE(y, saved.end());
  EXPECT_EQ(y->type, "<f8");
  double v[4];
  ASSERT_EQ(y->bytes.size(), sizeof v);
  std::memcpy(v, y->bytes.data(), sizeof v);
  // x w = [[1 2] [-3 -4]], transposed.
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], -3);
  EXPECT_EQ(v[2], 2);
  EXPECT_EQ(v[3], -4);
}

TEST_F(GraphCli, AnUnsupportedNodeIsOneErrorLineNamingIt) {
  const testing::cli_result r =
      testing::run_cli(OPVAL_CLI_PATH, dir_, {"graph", "reference", "with_sqrt.onnx", "--inputs", "in.npz"});
  EXPECT_EQ(r.code, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("node 'sqrt' (Sqrt): opval maps no op to ONNX's Sqrt"), std::string::npos) << r.err;
}

// `opval graph run|triage` run the stacks through the Python layer (tools/opval/python_commands.hpp).
TEST_F(GraphCli, RunAndTriageWithoutThePythonLayerSayWhatIsMissingInOneLine) {
  ::setenv("OPVAL_PYTHON", "/nonexistent/python3", 1);
  const testing::cli_result r = testing::run_cli(OPVAL_CLI_PATH, dir_, {"graph", "triage", "model.onnx"});
  ::unsetenv("OPVAL_PYTHON");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.find("opval: error: opval graph triage runs through opval's Python layer"), 0u) << r.err;
  EXPECT_NE(r.err.find("OPVAL_PYTHON"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(GraphCli, RunGoesThroughTheProjectsPythonLayer) {
  const fs::path venv_python = fs::path(OPVAL_SOURCE_DIR) / ".venv" / "bin" / "python";
  if (!fs::exists(venv_python)) GTEST_SKIP() << "no " << venv_python << " (scripts/setup makes it)";
  ::setenv("OPVAL_PYTHON", venv_python.c_str(), 1);
  const testing::cli_result r =
      testing::run_cli(OPVAL_CLI_PATH, dir_, {"graph", "run", "model.onnx", "--stack", "sim", "--inputs", "in.npz"});
  ::unsetenv("OPVAL_PYTHON");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 of 2 nodes judged alone; no node blamed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace opval
