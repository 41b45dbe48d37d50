// The session's problem selection (opval/session.hpp), which `opval run`, `opval bench`,
// opval.run and opval.check share: each selection form, the filters, and the errors that name
// what is wrong. tests/python/test_runner.py checks that the CLI and Python select alike.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "opval/error.hpp"
#include "opval/session.hpp"

namespace {

using namespace opval;

std::string message_of(const problem_selection& s) {
  try {
    select_problems(s);
  } catch (const opval::error& e) {
    return e.what();
  }
  return "";
}

TEST(session_selection, a_descriptor_is_one_problem_labelled_by_its_caller) {
  problem_selection s{.problems = {"softmax shape=3x5 dt=bf16"}, .inline_source = "<opval.run>"};
  const auto selected = select_problems(s);
  ASSERT_EQ(selected.size(), 1u);
  EXPECT_EQ(selected[0].prob.to_string(), "softmax shape=3x5 dt=bf16:f32:bf16");
  EXPECT_EQ(selected[0].source, "<opval.run>");
}

TEST(session_selection, a_shape_set_is_found_by_name) {
  const auto selected = select_problems({.problems = {"resnet50_conv"}});
  ASSERT_GT(selected.size(), 10u);
  for (const auto& lp : selected) {
    EXPECT_EQ(lp.prob.op(), "conv2d");
    EXPECT_NE(lp.source.find("resnet50_conv.txt:"), std::string::npos) << lp.source;
  }
}

TEST(session_selection, contracts_filter_by_their_canonical_types) {
  const auto all = select_problems({.ops = {"softmax"}});
  const auto bf16 = select_problems({.ops = {"softmax"}, .contracts = {"bf16"}});
  ASSERT_FALSE(bf16.empty());
  EXPECT_LT(bf16.size(), all.size());
  for (const auto& lp : bf16) EXPECT_EQ(lp.prob.dt.types_string(), "bf16:f32:bf16");
}

TEST(session_selection, ops_filter_given_problems_too) {
  const auto selected = select_problems({.ops = {"matmul"}, .problems = {"softmax shape=4", "matmul m=2 n=3 k=4"}});
  ASSERT_EQ(selected.size(), 1u);
  EXPECT_EQ(selected[0].prob.op(), "matmul");
}

TEST(session_selection, bad_selections_are_errors_naming_the_problem) {
  EXPECT_NE(message_of({.ops = {"no_such_op"}}).find("no_such_op"), std::string::npos);
  EXPECT_NE(message_of({.tag = "nightly"}).find("unknown suite tag 'nightly'"), std::string::npos);
  EXPECT_NE(message_of({.ops = {"matmul"}, .problems = {"softmax shape=4"}}).find("no problems selected"),
            std::string::npos);
  EXPECT_NE(message_of({.problems = {"no_such_shape_set"}}).find("no_such_shape_set"), std::string::npos);
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_NE(message_of({.problems = {dir}}).find("is a directory"), std::string::npos);
  EXPECT_NE(message_of({.problems = {std::string(300, 'a') + ".txt"}}).find("File name too long"), std::string::npos);
}

TEST(session_selection, one_word_that_is_no_op_names_a_file) {
  EXPECT_TRUE(opval::names_problem_file("resnet50_conv"));
  EXPECT_TRUE(opval::names_problem_file("shapes/mine"));
  EXPECT_FALSE(opval::names_problem_file("matmul"));
  EXPECT_FALSE(opval::names_problem_file("matmul m=3"));
}

// ------------------------------------------------------------ running a session

TEST(session_run, runs_every_problem_on_every_backend_and_keeps_its_journal) {
  const std::unique_ptr<case_executor> executor = make_executor("none", 0);
  const std::vector<session_backend> backends = make_session_backends({"sim", "sim"}, "", *executor);
  ASSERT_EQ(backends.size(), 1u);  // each backend once
  const std::filesystem::path journal =
      std::filesystem::temp_directory_path() / ("opval_session_" + std::to_string(::getpid()) + ".jsonl");
  const std::vector<located_problem> problems = select_problems({.problems = {"relu shape=8", "add shape_a=4 shape_b=4"}});
  std::ostringstream out, err;
  EXPECT_EQ(run_session(problems, run_options{}, backends, *executor, {.jsonl = journal.string()}, out, err), 0)
      << out.str() << err.str();
  EXPECT_NE(out.str().find("2 passed, 0 failed"), std::string::npos) << out.str();
  // Resumed: both cases come from the journal, none runs again.
  std::ostringstream again, notes;
  EXPECT_EQ(run_session(problems, run_options{}, backends, *executor, {.resume = journal.string()}, again, notes), 0);
  EXPECT_NE(notes.str().find("2 cases taken from the journal, 0 run now"), std::string::npos) << notes.str();
  std::filesystem::remove(journal);
}

TEST(session_run, a_session_where_nothing_ran_fails_and_says_so) {
  const std::unique_ptr<case_executor> executor = make_executor("none", 0);
  const std::vector<session_backend> backends = make_session_backends({"openblas"}, "", *executor);
  std::ostringstream out, err;
  EXPECT_EQ(run_session(select_problems({.problems = {"relu shape=8"}}), run_options{}, backends, *executor, {}, out, err),
            1);
  EXPECT_NE(err.str().find("no case ran"), std::string::npos);
}

TEST(session_run, executors_and_backend_names) {
  EXPECT_THROW(make_executor("threads", 1), error);
  EXPECT_EQ(backend_ref_of("onednn").name, "onednn");
  EXPECT_EQ(backend_ref_of("./libk.so").plugin_path, "./libk.so");
  EXPECT_EQ(backend_ref_of("plugins/k").plugin_path, "plugins/k");
  const std::unique_ptr<case_executor> executor = make_executor("none", 0);
  EXPECT_THROW(make_session_backends({"no_such_backend"}, "", *executor), error);
}

}  // namespace

namespace {

// Shape sets are found relative to the library (and $OPVAL_PROBLEMS_PATH), never through a
// source-tree path baked into it: an installed opval finds its own.
TEST(session_selection, shape_sets_are_found_beside_the_library_and_on_the_problems_path) {
  const std::vector<std::filesystem::path> dirs = opval::shape_set_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_TRUE(std::filesystem::exists(dirs.front() / "resnet50_conv.txt")) << dirs.front();
  const std::filesystem::path mine = std::filesystem::temp_directory_path() / ("opval_sets_" + std::to_string(::getpid()));
  std::filesystem::create_directories(mine);
  std::ofstream(mine / "my_layers.txt") << "relu shape=7\nrelu shape=9\n";
  ::setenv("OPVAL_PROBLEMS_PATH", mine.c_str(), 1);
  const auto selected = opval::select_problems({.problems = {"my_layers"}});
  ::unsetenv("OPVAL_PROBLEMS_PATH");
  std::filesystem::remove_all(mine);
  ASSERT_EQ(selected.size(), 2u);
  EXPECT_EQ(selected[1].prob.to_string(), "relu shape=9 dt=f32:f32:f32");
}

TEST(session_selection, the_library_holds_no_source_tree_path_to_its_shape_sets) {
  Dl_info info{};
  ASSERT_NE(::dladdr(reinterpret_cast<const void*>(&opval::shape_set_dirs), &info), 0);
  std::ifstream in(info.dli_fname, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.find(std::string(OPVAL_SOURCE_DIR) + "/tests/problems"), std::string::npos) << info.dli_fname;
}

}  // namespace
