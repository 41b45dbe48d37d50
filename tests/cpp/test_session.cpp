// The session's problem selection (opval/session.hpp), which `opval run`, `opval bench`,
// opval.run and opval.check share: each selection form, the filters, and the errors that name
// what is wrong. tests/python/test_runner.py checks that the CLI and Python select alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "opval/error.hpp"
#include "opval/session.hpp"

namespace {

using opval::problem_selection;
using opval::select_problems;

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

}  // namespace
