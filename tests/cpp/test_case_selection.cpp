// Choosing a run's cases within a time budget (core/case_selection.hpp, core/changed_paths.hpp,
// core/tiers.hpp; `opval run --budget --changes --tier --seeds`; docs/FLEET.md): the order of
// priority, coverage per second, the sample of slow cases, what is left out, and on the command
// line a planted history and diff whose failed and changed-op cases run first.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_testing.hpp"
#include "core/case_selection.hpp"
#include "core/changed_paths.hpp"
#include "core/tiers.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

using testing::cli_result;

selection_candidate candidate(const std::string& descriptor, double seconds, const std::string& backend = "sim") {
  return {descriptor + "@" + backend, descriptor.substr(0, descriptor.find(' ')), backend, descriptor, 1, seconds, true,
          case_features(descriptor, backend)};
}

std::vector<std::string> whys(const case_selection& s) {
  std::vector<std::string> out;
  for (const case_choice& c : s.choices) out.push_back(c.why);
  return out;
}

TEST(case_selection, failures_then_flaky_then_changed_come_first) {
  const std::vector<selection_candidate> c = {
      candidate("relu shape=8 dt=f32:f32:f32", 1),       // 0: plain
      candidate("matmul m=8 n=8 k=8 dt=f32:f32:f32", 1), // 1: its op changed
      candidate("relu shape=9 dt=f32:f32:f32", 1),       // 2: flaky
      candidate("relu shape=10 dt=f32:f32:f32", 1),      // 3: failed once recently
      candidate("relu shape=11 dt=f32:f32:f32", 1),      // 4: failed at its latest run
      candidate("add shape=8 dt=f32:f32:f32", 1, "onednn"),  // 5: its backend changed
  };
  selection_inputs in{.budget_seconds = 100};
  in.history[c[2].key] = {.flaky = true};
  in.history[c[3].key] = {.recent_failures = 1, .failed_at = "a"};
  in.history[c[4].key] = {.failed_last = true, .recent_failures = 3, .failed_at = "b"};
  in.changed_ops = {"matmul"};
  in.changed_backends = {"onednn"};
  const case_selection s = select_cases(c, in);
  ASSERT_EQ(s.order.size(), 6u);
  EXPECT_EQ(s.order[0], 4u);
  EXPECT_EQ(s.order[1], 3u);
  EXPECT_EQ(s.order[2], 2u);
  EXPECT_EQ(std::set<std::size_t>(s.order.begin() + 3, s.order.begin() + 5), (std::set<std::size_t>{1, 5}));
  EXPECT_EQ(s.order[5], 0u);
  EXPECT_EQ(s.choices[0].why, "failed at its latest run (commit b)");
  EXPECT_EQ(s.choices[1].why, "failed 1 of its latest runs (last at commit a)");
  EXPECT_EQ(s.choices[2].why, "flaky: different verdicts at one commit");
  EXPECT_EQ(s.choices[0].rank, 0);
  EXPECT_EQ(s.choices[5].rank, 5);
  EXPECT_TRUE(s.left_out.empty());
  EXPECT_TRUE(s.features_lost.empty());
  EXPECT_EQ(s.chosen_for.at("failed"), 2);
  EXPECT_EQ(s.chosen_for.at("changed"), 2);
}

TEST(case_selection, the_budget_holds_and_what_is_left_out_is_said) {
  std::vector<selection_candidate> c;
  for (int i = 0; i < 40; ++i)
    c.push_back(candidate(fmt::format("relu shape={} dt=f32:f32:f32", 1 << (i % 20)), 0.5 + 0.01 * i));
  const case_selection s = select_cases(c, {.budget_seconds = 5});
  EXPECT_LE(s.chosen_seconds, 5.0);
  EXPECT_EQ(s.order.size() + s.left_out.size(), c.size());
  double total = 0;
  for (const auto& x : c) total += x.seconds;
  EXPECT_NEAR(s.chosen_seconds + s.left_out_seconds, total, 1e-9);
  const std::string summary = selection_summary(s, c);
  EXPECT_NE(summary.find("chose " + std::to_string(s.order.size()) + " of 40 cases"), std::string::npos) << summary;
  EXPECT_NE(summary.find("coverage lost"), std::string::npos) << summary;
  const nlohmann::json j = nlohmann::json::parse(selection_json(s, c));
  EXPECT_EQ(j["selection"]["left_out"].size(), s.left_out.size());
  EXPECT_EQ(j["selection"]["features_lost"].size(), s.features_lost.size());
  // A case longer than the whole budget is never chosen.
  c.push_back(candidate("relu shape=3 dt=f16:f16:f16", 50));
  const case_selection t = select_cases(c, {.budget_seconds = 20});
  EXPECT_TRUE(std::ranges::find(t.left_out, c.size() - 1) != t.left_out.end());
  EXPECT_THROW(select_cases(c, {.budget_seconds = 0}), error);
}

TEST(case_selection, coverage_goes_first_and_per_second) {
  // Two cases cover the same new feature (f16): the cheaper one is chosen for it; the budget
  // then has no room for the other, which is left out with nothing lost.
  const std::vector<selection_candidate> c = {
      candidate("relu shape=8 dt=f32:f32:f32", 1),
      candidate("relu shape=8 dt=f16:f16:f16", 3),
      candidate("relu shape=8 dt=f16:f16:f16 fill=special", 1.5),
      candidate("relu shape=8 dt=f16:f16:f16 fill=special", 1.5),
  };
  const case_selection s = select_cases(c, {.budget_seconds = 2.6});
  ASSERT_EQ(s.order.size(), 2u);
  EXPECT_EQ(s.order[0], 0u);  // 4 features per second, before f16's 3 per 1.5 s
  EXPECT_EQ(s.order[1], 2u);
  EXPECT_NE(s.choices[1].why.find("covers"), std::string::npos);
  EXPECT_NE(s.choices[1].why.find("relu fill=special"), std::string::npos) << s.choices[1].why;
  EXPECT_TRUE(s.features_lost.empty());
}

TEST(case_selection, the_slow_sample_rotates_with_the_commit) {
  std::vector<selection_candidate> c;
  for (int i = 0; i < 60; ++i) c.push_back(candidate(fmt::format("relu shape=16 dt=f32:f32:f32 fill=s{}", i % 1), 2));
  for (auto& x : c) x.key += std::to_string(&x - c.data());
  const auto chosen_with = [&](const std::string& commit) {
    const case_selection s = select_cases(c, {.budget_seconds = 20, .sample_key = commit});
    return std::set<std::size_t>(s.order.begin(), s.order.end());
  };
  const std::set<std::size_t> a = chosen_with("aaa"), b = chosen_with("bbb");
  EXPECT_EQ(a, chosen_with("aaa"));  // deterministic
  EXPECT_NE(a, b);                   // another commit, another sample
  EXPECT_EQ(a.size(), 10u);
}

TEST(case_selection, features_come_from_the_descriptor) {
  const std::vector<std::string> f = case_features("matmul m=7 n=1024 k=9 ta=1 shape=13x61 dt=bf16:f32:bf16", "onednn");
  for (const char* expected : {"matmul", "backend onednn", "matmul m~2^3", "matmul n~2^10", "matmul ta~2^0",
                               "matmul shape~rank2,2^10", "matmul dt=bf16:f32:bf16"})
    EXPECT_NE(std::ranges::find(f, expected), f.end()) << expected;
}

TEST(case_selection, budgets_parse_as_durations) {
  EXPECT_EQ(parse_budget("600"), 600);
  EXPECT_EQ(parse_budget("10m"), 600);
  EXPECT_EQ(parse_budget("1h30m"), 5400);
  EXPECT_EQ(parse_budget("2.5h"), 9000);
  EXPECT_EQ(parse_budget("90s"), 90);
  EXPECT_EQ(parse_budget("0"), 0);
  for (const char* bad : {"", "ten", "10x", "-5m", "1h30", "m", "nan"}) EXPECT_THROW(parse_budget(bad), error) << bad;
}

TEST(changed_paths, paths_map_to_op_and_backend_folders) {
  const std::vector<std::string> ops = {"softmax", "log_softmax", "matmul", "layer_norm", "relu"};
  const std::vector<std::string> backends = {"sim", "onednn", "onednn_winograd", "openblas"};
  const touched_names t = touched_by(
      std::vector<std::string>{"src/ops/matmul/matmul.cpp", "src/ops/common_softmax/rows.hpp",
                               "src/backends/onednn/conv.cpp", "kernels/relu_avx512.cu", "README.md", "src/core/fill.cpp"},
      ops, backends);
  EXPECT_EQ(t.ops, (std::set<std::string>{"matmul", "softmax", "log_softmax", "relu"}));
  EXPECT_EQ(t.backends, (std::set<std::string>{"onednn", "onednn_winograd"}));
  EXPECT_TRUE(touched_by(std::vector<std::string>{"src/core/fill.cpp", "docs/FLEET.md"}, ops, backends).ops.empty());
}

TEST(tiers, each_tier_names_a_suite_seeds_and_a_budget) {
  ASSERT_NE(find_tier("smoke"), nullptr);
  EXPECT_EQ(find_tier("smoke")->budget_seconds, 60);
  EXPECT_EQ(find_tier("regression")->tag, "regression");
  EXPECT_EQ(find_tier("nightly")->tag, "generated");
  EXPECT_EQ(find_tier("nightly")->seeds, 3);
  EXPECT_EQ(find_tier("my-team"), nullptr);
}

class budget_cli : public ::testing::Test {
 protected:
  testing::scratch_dir dir_{"opval_test_budget_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())};
  cli_result opval(const std::vector<std::string>& args) const { return testing::run_cli(OPVAL_CLI_PATH, dir_.path(), args); }
  std::vector<nlohmann::json> records(const std::string& file) const {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_.path() / file);
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
};

// The issue's test: a planted history (one matmul case failed at the last run) and a planted
// diff (softmax's folder): the budgeted run runs the failed case first, then softmax's, then
// the rest for coverage, and says what it left out.
TEST_F(budget_cli, a_planted_failure_and_diff_run_first) {
  const std::vector<std::string> selection = {"--tag", "regression", "--op", "relu", "--op", "softmax", "--op", "matmul", "-q"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), selection.begin(), selection.end());
    return args;
  };
  cli_result r = opval(with({"run", "--jsonl", "base.jsonl"}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<nlohmann::json> base = records("base.jsonl");
  std::string failed_descriptor;
  {
    std::ofstream planted(dir_.path() / "planted.jsonl");
    for (nlohmann::json& j : base) {
      if (failed_descriptor.empty() && j["op"] == "matmul" && j["descriptor"].get<std::string>().find("k=65") != std::string::npos)
        failed_descriptor = j["descriptor"], j["state"] = "FAILED", j["reason"] = "planted";
      planted << j.dump() << '\n';
    }
  }
  ASSERT_FALSE(failed_descriptor.empty());
  r = opval({"history", "record", "planted.jsonl", "--db", "h.db", "--commit", "c1"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ofstream(dir_.path() / "changes.txt") << "src/ops/softmax/softmax.cpp\n";
  // A budget of a third of the cases' recorded time.
  double total = 0;
  for (const nlohmann::json& j : base) total += j["timings"]["total"].get<double>();
  const std::string budget = fmt::format("{:.3f}", total / 3);
  r = opval(with({"run", "--budget", budget, "--history", "h.db", "--changes", "changes.txt",
                  "--commit", "c2", "--jsonl", "budget.jsonl"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("1 failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("left out"), std::string::npos) << r.err;
  const std::vector<nlohmann::json> got = records("budget.jsonl");
  ASSERT_TRUE(got[0].contains("selection"));
  const nlohmann::json& header = got[0]["selection"];
  EXPECT_LE(header["chosen_seconds"].get<double>(), std::stod(budget));
  EXPECT_GT(header["left_out"].size(), 0u);
  EXPECT_EQ(header["chosen"].get<std::size_t>() + header["left_out"].size(), base.size());
  // The failed case first, then every softmax case, then the others.
  EXPECT_EQ(got[1]["descriptor"], failed_descriptor);
  EXPECT_EQ(got[1]["selection"]["why"], "failed at its latest run (commit c1)");
  std::size_t k = 2;
  for (; k < got.size() && got[k]["op"] == "softmax"; ++k)
    EXPECT_EQ(got[k]["selection"]["why"], "the change touches op softmax");
  std::size_t softmax_cases = 0;
  for (const nlohmann::json& j : base) softmax_cases += j["op"] == "softmax";
  EXPECT_EQ(k - 2, softmax_cases);
  for (; k < got.size(); ++k) {
    EXPECT_NE(got[k]["op"], "softmax");
    EXPECT_EQ(got[k]["selection"]["rank"], k - 1);
  }
  // --changes without a budget is bad input.
  r = opval(with({"run", "--changes", "changes.txt"}));
  EXPECT_EQ(r.code, 2);
  r = opval(with({"run", "--budget", "ten minutes"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is not a duration"), std::string::npos) << r.err;
}

TEST_F(budget_cli, seeds_run_each_case_at_each_seed_and_shards_merge) {
  cli_result r = opval({"run", "--op", "relu", "--seeds", "2", "--seed", "5", "--jsonl", "whole.jsonl", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<nlohmann::json> whole = records("whole.jsonl");
  ASSERT_EQ(whole.size(), 40u);
  EXPECT_EQ(whole[0]["descriptor"], whole[1]["descriptor"]);
  EXPECT_EQ(whole[0]["seed"], 5);
  EXPECT_EQ(whole[1]["seed"], 6);
  for (const char* i : {"0", "1", "2"}) {
    r = opval({"run", "--op", "relu", "--seeds", "2", "--seed", "5", "--budget", "1h", "--shard", std::string(i) + "/3",
               "--jsonl", std::string("s") + i + ".jsonl", "-q"});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  r = opval({"merge", "s0.jsonl", "s1.jsonl", "s2.jsonl", "--jsonl", "merged.jsonl", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<nlohmann::json> merged = records("merged.jsonl");
  ASSERT_EQ(merged.size(), 41u);  // the selection line, then the 40 cases
  EXPECT_TRUE(merged[0].contains("selection"));
  for (std::size_t k = 1; k < merged.size(); ++k) EXPECT_EQ(merged[k]["selection"]["rank"], k - 1);
}

}  // namespace
}  // namespace opval
