// Output files that lose nothing (core/output_file.hpp): never an input of the same run,
// never an empty path, and every record accounted for, so that a full disk is an error that
// says how many records reached the file.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_testing.hpp"
#include "opval/error.hpp"
#include "core/output_file.hpp"

namespace opval {
namespace {

namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_ / "problems.txt") << "relu shape=8\n"; }
  testing::scratch_dir scratch_{"opval_test_output_file"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(OutputFile, RefusesAnInputOfTheRunUnderAnyName) {
  const std::vector<std::string> inputs = {(dir_ / "problems.txt").string()};
  fs::create_symlink(dir_ / "problems.txt", dir_ / "link.txt");
  for (const fs::path& output : {dir_ / "problems.txt", dir_ / "link.txt", dir_ / "." / "problems.txt"}) {
    try {
      output_file f(output.string(), false, "JSONL", inputs);
      ADD_FAILURE() << output << " was opened";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find("is also an input of this run"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(testing::read_all(dir_ / "problems.txt"), "relu shape=8\n") << "the input is untouched";
  EXPECT_NO_THROW(output_file((dir_ / "out.jsonl").string(), false, "JSONL", inputs));
  const std::vector<std::string> none = {""};  // no known-failures file: an empty name names none
  EXPECT_NO_THROW(output_file((dir_ / "out.jsonl").string(), false, "JSONL", none));
}

TEST_F(OutputFile, RefusesAnEmptyPath) {
  EXPECT_THROW(output_file("", false, "CSV"), error);
}

TEST_F(OutputFile, CountsTheRecordsThatReachedIt) {
  output_file f((dir_ / "sub" / "out.jsonl").string(), false, "JSONL");
  for (int i = 0; i < 3; ++i) {
    f.stream() << "{}\n" << std::flush;
    f.record_written();
  }
  EXPECT_EQ(f.failure(), "");
  EXPECT_NO_THROW(f.check_reached());
  EXPECT_EQ(testing::read_all(dir_ / "sub" / "out.jsonl"), "{}\n{}\n{}\n");
}

TEST_F(OutputFile, AFullDiskIsAnErrorSayingHowManyRecordsReachedIt) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  output_file f("/dev/full", false, "JSONL");
  for (int i = 0; i < 2; ++i) {
    f.stream() << "{}\n" << std::flush;
    f.record_written();
  }
  EXPECT_EQ(f.failure(), "writing JSONL file '/dev/full' failed (No space left on device): 0 of 2 records reached it");
  EXPECT_THROW(f.check_reached(), error);
}

TEST(InputFiles, AreTheProblemsSourceFilesAndTheOthersOnce) {
  const std::vector<located_problem> problems = {{parse_problem("relu shape=8"), "a.txt:1"},
                                                 {parse_problem("relu shape=9"), "a.txt:2"},
                                                 {parse_problem("relu shape=7"), "<command line>"},
                                                 {parse_problem("relu shape=6"), "dir/b.txt:4"}};
  EXPECT_EQ(input_files(problems, {"known.txt"}), (std::vector<std::string>{"known.txt", "a.txt", "dir/b.txt"}));
}

}  // namespace
}  // namespace opval
