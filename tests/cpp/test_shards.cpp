// Sharding a run and merging its shards (core/shards.hpp, core/merge.hpp, `opval run --shard`,
// `opval merge`; docs/FLEET.md): the engines' environments, the cost-balanced assignment, and
// shards that merge into exactly the unsharded run's records, or fail naming what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_testing.hpp"
#include "core/merge.hpp"
#include "core/shards.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

namespace fs = std::filesystem;
using testing::cli_result;

environment with(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(shards, index_of_count_is_checked) {
  const environment none = with({});
  EXPECT_FALSE(parse_shard("", none));
  const shard_choice s = *parse_shard("2/5", none);
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  for (const char* bad : {"5/5", "-1/4", "1/0", "1", "a/b", "1/2/3", "/2", "1/"})
    EXPECT_THROW(parse_shard(bad, none), error) << bad;
}

TEST(shards, auto_reads_each_engines_environment) {
  const struct {
    std::map<std::string, std::string> vars;
    std::int64_t index, count;
  } engines[] = {
      {{{"TEST_TOTAL_SHARDS", "4"}, {"TEST_SHARD_INDEX", "3"}}, 3, 4},                                   // Bazel
      {{{"GTEST_TOTAL_SHARDS", "2"}, {"GTEST_SHARD_INDEX", "0"}}, 0, 2},                                 // googletest
      {{{"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_ID", "2"}}, 2, 4},                           // --array=0-3
      {{{"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}}, 3, 4},  // 1-4
      {{{"JOB_COMPLETION_INDEX", "7"}, {"OPVAL_SHARD_COUNT", "8"}}, 7, 8},                               // Kubernetes
  };
  for (const auto& e : engines) {
    const shard_choice s = *parse_shard("auto", with(e.vars));
    EXPECT_EQ(s.index, e.index) << s.from;
    EXPECT_EQ(s.count, e.count) << s.from;
  }
  // auto never shards silently: no engine's variables, or half of a pair, is an error.
  EXPECT_THROW(parse_shard("auto", with({})), error);
  EXPECT_THROW(parse_shard("auto", with({{"JOB_COMPLETION_INDEX", "1"}})), error);
  EXPECT_THROW(parse_shard("auto", with({{"GTEST_TOTAL_SHARDS", "2"}, {"GTEST_SHARD_INDEX", "2"}})), error);
}

TEST(shards, bazel_is_told_that_opval_shards) {
  const testing::scratch_dir dir("opval_test_shards_bazel");
  const fs::path status = dir.path() / "status";
  const shard_choice s = *parse_shard(
      "auto", with({{"TEST_TOTAL_SHARDS", "2"}, {"TEST_SHARD_INDEX", "1"}, {"TEST_SHARD_STATUS_FILE", status.string()}}));
  acknowledge_sharding(s);
  EXPECT_TRUE(fs::exists(status));
}

TEST(shards, costs_are_balanced_and_every_process_assigns_alike) {
  std::vector<double> costs;
  for (int i = 0; i < 1000; ++i) costs.push_back(1.0 + (i * 7919 % 1000) * (i % 13 == 0 ? 100.0 : 1.0));
  for (const std::int64_t n : {1, 3, 8, 16}) {
    const std::vector<std::int64_t> shard = assign_shards(costs, n);
    EXPECT_EQ(shard, assign_shards(costs, n));
    std::vector<double> load(n, 0.0);
    for (std::size_t c = 0; c < costs.size(); ++c) {
      ASSERT_GE(shard[c], 0);
      ASSERT_LT(shard[c], n);
      load[shard[c]] += costs[c];
    }
    const auto [lo, hi] = std::ranges::minmax(load);
    EXPECT_LE(hi - lo, *std::ranges::max_element(costs)) << n << " shards";
  }
  // More shards than cases: some are empty, none holds two.
  const std::vector<std::int64_t> few = assign_shards(std::vector<double>{3, 2, 1}, 5);
  EXPECT_EQ(few, (std::vector<std::int64_t>{0, 1, 2}));
}

// --- opval run --shard and opval merge -------------------------------------------------------

class ShardCli : public ::testing::Test {
 protected:
  testing::scratch_dir dir_{std::string("opval_test_shards_") +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name()};
  cli_result opval(const std::vector<std::string>& args) const {
    return testing::run_cli(OPVAL_CLI_PATH, dir_.path(), args);
  }
  fs::path at(const std::string& name) const { return dir_.path() / name; }

  /// The journal's records as the unsharded run compares them: timings, memory and the build
  /// identity taken out, the rest in its order.
  std::vector<std::string> comparable(const std::string& name) const {
    std::istringstream lines(testing::read_all(at(name)));
    std::vector<std::string> out;
    for (std::string line; std::getline(lines, line);) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
      for (const char* varying : {"timings", "memory", "opval"}) j.erase(varying);
      out.push_back(j.dump());
    }
    return out;
  }

  /// Runs `args` whole and in `n` shards, merges the shards in reverse order, and expects the
  /// merged journal and summary to be the whole run's.
  void expect_shards_merge_to_the_whole(const std::vector<std::string>& args, int n) {
    std::vector<std::string> whole = args;
    whole.insert(whole.end(), {"--jsonl", "whole.jsonl"});
    const cli_result w = opval(whole);
    ASSERT_TRUE(w.code == 0 || w.code == 1) << w.out << w.err;  // 1: a library's failure, which merges too
    std::vector<std::string> merge = {"merge"};
    for (int i = n - 1; i >= 0; --i) {
      std::vector<std::string> part = args;
      const std::string journal = "shard" + std::to_string(i) + ".jsonl";
      part.insert(part.end(), {"--shard", std::to_string(i) + "/" + std::to_string(n), "--jsonl", journal});
      const cli_result s = opval(part);
      ASSERT_TRUE(s.code == 0 || s.code == 1) << s.out << s.err;
      merge.push_back(journal);
    }
    merge.insert(merge.end(), {"--jsonl", "merged.jsonl"});
    const cli_result m = opval(merge);
    ASSERT_EQ(m.code, w.code) << m.out << m.err;
    const std::vector<std::string> expected = comparable("whole.jsonl"), merged = comparable("merged.jsonl");
    EXPECT_GT(expected.size(), static_cast<std::size_t>(n));
    ASSERT_EQ(merged.size(), expected.size());
    for (std::size_t k = 0; k < merged.size(); ++k) ASSERT_EQ(merged[k], expected[k]) << "record " << k;
    auto last_line = [](const std::string& text) {
      const std::string trimmed = text.substr(0, text.find_last_not_of('\n') + 1);
      return trimmed.substr(trimmed.rfind('\n') + 1);
    };
    EXPECT_EQ(last_line(m.out), last_line(w.out));
  }
};

TEST_F(ShardCli, shards_of_a_run_merge_into_the_whole_runs_records) {
  expect_shards_merge_to_the_whole({"run", "--tag", "smoke", "--op", "relu", "--op", "softmax", "--op", "matmul",
                                    "--backend", "sim,onednn"},
                                   4);
}

TEST_F(ShardCli, shards_of_a_generated_suite_merge_with_its_coverage) {
  expect_shards_merge_to_the_whole({"run", "--tag", "generated", "--op", "relu", "--op", "add", "--suite-budget", "20"},
                                   3);
  // The coverage lines come first, once.
  std::istringstream lines(testing::read_all(at("merged.jsonl")));
  std::string first;
  std::getline(lines, first);
  EXPECT_TRUE(first.starts_with(R"({"coverage":)")) << first;
}

TEST_F(ShardCli, a_shard_missing_twice_unfinished_or_of_another_run_is_named) {
  const std::vector<std::string> run = {"run", "--tag", "smoke", "--op", "relu", "--op", "gelu"};
  for (const std::string shard : {"0/3", "1/3", "2/3"}) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--shard", shard, "--jsonl", "s" + shard.substr(0, 1) + ".jsonl"});
    ASSERT_EQ(opval(args).code, 0);
  }
  std::vector<std::string> other = run;
  other.insert(other.end(), {"--shard", "0/2", "--jsonl", "other.jsonl"});
  ASSERT_EQ(opval(other).code, 0);
  std::vector<std::string> whole = run;
  whole.insert(whole.end(), {"--jsonl", "whole.jsonl"});
  ASSERT_EQ(opval(whole).code, 0);
  const std::string s2 = testing::read_all(at("s2.jsonl"));
  std::ofstream(at("cut.jsonl")) << s2.substr(0, s2.size() / 2);                        // killed mid-line
  std::ofstream(at("short.jsonl")) << s2.substr(0, s2.find('\n') + 1);                  // one record of several
  const struct {
    std::vector<std::string> journals;
    std::string named;
  } bad[] = {
      {{"s0.jsonl", "s1.jsonl"}, "shard 2 of 3 missing"},
      {{"s0.jsonl", "s1.jsonl", "s1.jsonl", "s2.jsonl"}, "both hold shard 1/3"},
      {{"s0.jsonl", "s1.jsonl", "cut.jsonl"}, "unfinished line"},
      {{"s0.jsonl", "s1.jsonl", "short.jsonl"}, "unfinished"},
      {{"s0.jsonl", "s1.jsonl", "s2.jsonl", "other.jsonl"}, "different runs"},
      {{"s0.jsonl", "whole.jsonl"}, "has no shard"},
      {{"s0.jsonl", "absent.jsonl"}, "absent.jsonl"},
  };
  for (const auto& b : bad) {
    std::vector<std::string> args = {"merge"};
    args.insert(args.end(), b.journals.begin(), b.journals.end());
    const cli_result r = opval(args);
    EXPECT_EQ(r.code, 2) << b.named << ": " << r.out << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find(b.named), std::string::npos) << r.err;
  }
  // The merged journal may not overwrite a shard's.
  const cli_result r = opval({"merge", "s0.jsonl", "s1.jsonl", "s2.jsonl", "--jsonl", "s0.jsonl"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(testing::read_all(at("s0.jsonl")), "");
}

TEST_F(ShardCli, more_shards_than_cases_leave_empty_journals_that_merge_passes_over) {
  const std::vector<std::string> run = {"run", "--problems", "relu shape=7", "--problems", "gelu shape=9"};
  std::vector<std::string> merge = {"merge"};
  for (int i = 0; i < 4; ++i) {
    std::vector<std::string> args = run;
    const std::string journal = "s" + std::to_string(i) + ".jsonl";
    args.insert(args.end(), {"--shard", std::to_string(i) + "/4", "--jsonl", journal});
    const cli_result r = opval(args);
    ASSERT_EQ(r.code, 0) << r.err;  // an empty shard is no failure
    if (i >= 2) EXPECT_NE(r.err.find("has no case (the run has 2)"), std::string::npos) << r.err;
    merge.push_back(journal);
  }
  const cli_result m = opval(merge);
  EXPECT_EQ(m.code, 0) << m.out << m.err;
  EXPECT_NE(m.err.find("merged 4 shards: 2 cases"), std::string::npos) << m.err;
  // Only empty journals: nothing to merge, said so.
  const cli_result none = opval({"merge", "s2.jsonl", "s3.jsonl"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("hold no case"), std::string::npos) << none.err;
}

TEST_F(ShardCli, an_interrupted_shard_resumes_and_then_merges) {
  const std::vector<std::string> run = {"run", "--tag", "smoke", "--op", "relu", "--op", "layer_norm"};
  for (const std::string shard : {"0/2", "1/2"}) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--shard", shard, "--jsonl", "s" + shard.substr(0, 1) + ".jsonl"});
    ASSERT_EQ(opval(args).code, 0);
  }
  const std::string s1 = testing::read_all(at("s1.jsonl"));
  std::ofstream(at("s1.jsonl")) << s1.substr(0, s1.find('\n') + 1);
  std::vector<std::string> resume = run;
  resume.insert(resume.end(), {"--shard", "1/2", "--resume", "s1.jsonl"});
  ASSERT_EQ(opval(resume).code, 0);
  const cli_result m = opval({"merge", "s1.jsonl", "s0.jsonl"});
  EXPECT_EQ(m.code, 0) << m.out << m.err;
}

}  // namespace
}  // namespace opval
