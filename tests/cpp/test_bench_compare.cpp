// Regression verdicts on synthetic series: a shift beyond the threshold is slower or faster,
// one within it is the same, wide noise is too noisy to tell, and identical distributions
// are almost never called a change; a change beside load or noise warnings, or within the
// spread of a side's repetitions, is too noisy to tell, saying why; then the file comparison
// and its errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_compare.hpp"
#include "bench/bench_report.hpp"
#include "opval/error.hpp"
#include "core/rng.hpp"

namespace opval {
namespace {

namespace fs = std::filesystem;

// n times of median `median` with relative noise `spread` (lognormal), from stream `stream`.
std::vector<double> times(std::size_t n, double median, double spread, std::uint64_t stream) {
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = median * std::exp(spread * random_normal(11, stream, i));
  return out;
}

TEST(bench_compare, shifts_beyond_the_threshold_are_slower_or_faster) {
  const auto base = times(200, 100e-6, 0.02, 1);
  const case_change slower = compare_series(base, times(200, 120e-6, 0.02, 2));
  EXPECT_EQ(slower.verdict, change_verdict::slower) << slower.why;
  EXPECT_NEAR(slower.ratio_point, 1.2, 0.01);
  EXPECT_LE(slower.ratio.low, slower.ratio_point);
  EXPECT_GE(slower.ratio.high, slower.ratio_point);
  EXPECT_LT(slower.test.p_value, 0.001);
  const case_change faster = compare_series(base, times(200, 80e-6, 0.02, 3));
  EXPECT_EQ(faster.verdict, change_verdict::faster) << faster.why;
}

TEST(bench_compare, a_change_within_the_threshold_is_the_same) {
  const auto base = times(200, 100e-6, 0.02, 4);
  EXPECT_EQ(compare_series(base, times(200, 100e-6, 0.02, 5)).verdict, change_verdict::same);
  const case_change small = compare_series(base, times(200, 102e-6, 0.02, 6));
  EXPECT_EQ(small.verdict, change_verdict::same) << small.why << ": real, but below the 5% threshold";
  compare_options strict;
  strict.threshold = 0.005;
  EXPECT_EQ(compare_series(base, times(200, 103e-6, 0.002, 6), strict).verdict, change_verdict::slower);
}

TEST(bench_compare, wide_noise_is_too_noisy_to_tell) {
  const case_change noisy = compare_series(times(30, 100e-6, 0.5, 7), times(30, 106e-6, 0.5, 8));
  EXPECT_EQ(noisy.verdict, change_verdict::too_noisy) << noisy.why;
  EXPECT_GT(noisy.ratio.high - noisy.ratio.low, 0.1);
}

TEST(bench_compare, identical_distributions_are_rarely_called_a_change) {
  int changes = 0;
  const int trials = 100;
  for (int t = 0; t < trials; ++t) {
    const std::uint64_t s = 1000 + 2 * static_cast<std::uint64_t>(t);
    const change_verdict v = compare_series(times(100, 50e-6, 0.1, s), times(100, 50e-6, 0.1, s + 1)).verdict;
    changes += v == change_verdict::slower || v == change_verdict::faster;
  }
  EXPECT_LE(changes, 5);
}

// With repetitions of their own (opval bench --repetitions) the test is over those medians:
// 5 against 5 fully separated give the exact p = 2/252; the chunks of the same series would
// give 10 against 10.
TEST(bench_compare, the_test_runs_on_the_runs_own_repetitions_when_there_are_some) {
  const auto base = times(200, 100e-6, 0.02, 11), next = times(200, 120e-6, 0.02, 12);
  const std::vector<double> base_reps = {100e-6, 101e-6, 99e-6, 100.5e-6, 99.5e-6};
  const std::vector<double> next_reps = {120e-6, 121e-6, 119e-6, 120.5e-6, 119.5e-6};
  const case_change own = compare_series(base, next, {}, base_reps, next_reps);
  EXPECT_NEAR(own.test.p_value, 2.0 / 252, 1e-12);
  EXPECT_EQ(own.verdict, change_verdict::slower);
  const case_change chunks = compare_series(base, next, {}, base_reps, std::vector<double>{120e-6, 121e-6});
  EXPECT_LT(chunks.test.p_value, 2.0 / 252) << "two repetitions are too few: the 10 chunks decide";
}

// The case: back-to-back runs of one build on a loaded machine, 30% apart with tight
// intervals. A warning on either side leaves the change untold, and says which.
TEST(bench_compare, a_change_beside_a_load_or_noise_warning_is_too_noisy_to_tell) {
  const auto base = times(200, 100e-6, 0.02, 21), next = times(200, 130e-6, 0.02, 22);
  ASSERT_EQ(compare_sides({base}, {next}).verdict, change_verdict::slower) << "without warnings, a clear change";
  const std::string load = "other load on the machine: load average 2.93 on 2 CPUs (this run accounts for 1)";
  const case_change loaded = compare_sides({base}, {next, {}, {load}});
  EXPECT_EQ(loaded.verdict, change_verdict::too_noisy);
  EXPECT_EQ(loaded.noisy_because, "NEW recorded " + load);
  const case_change noisy = compare_sides({base, {}, {"noise: high variation"}}, {next, {}, {load}});
  EXPECT_EQ(noisy.noisy_because, "BASE recorded noise: high variation; NEW recorded " + load);
  // A "same" needs no warning-free run: its interval lies within the threshold, noise included.
  EXPECT_EQ(compare_sides({base}, {times(200, 100e-6, 0.02, 23), {}, {load}}).verdict, change_verdict::same);
}

// Repetitions 1.36x apart within one run cannot tell a 1.27x change from chance, however
// significant the test over them.
TEST(bench_compare, a_change_within_a_sides_repetition_spread_is_too_noisy_to_tell) {
  const auto base = times(200, 100e-6, 0.02, 24), next = times(200, 127e-6, 0.02, 25);
  const std::vector<double> base_reps = {99e-6, 100e-6, 101e-6, 100e-6, 99.5e-6, 100.5e-6, 101e-6, 99e-6, 100e-6, 135e-6};
  std::vector<double> next_reps;
  for (int i = 0; i < 10; ++i) next_reps.push_back((125 + 0.5 * i) * 1e-6);
  const case_change c = compare_sides({base, base_reps}, {next, next_reps});
  EXPECT_LT(c.test.p_value, 0.05) << "the test alone would call it slower";
  EXPECT_EQ(c.verdict, change_verdict::too_noisy) << c.why;
  EXPECT_EQ(c.noisy_because, "BASE's repetitions spread 1.36x (max / min of their 10 medians), as wide as the change 1.27x");
  // Without the outlying repetition the spread is 1.02x: slower.
  std::vector<double> tight = base_reps;
  tight.back() = 100e-6;
  EXPECT_EQ(compare_sides({base, tight}, {next, next_reps}).verdict, change_verdict::slower);
}

TEST(bench_compare, every_too_noisy_verdict_says_why) {
  const case_change straddles = compare_series(times(30, 100e-6, 0.5, 7), times(30, 106e-6, 0.5, 8));
  ASSERT_EQ(straddles.verdict, change_verdict::too_noisy);
  EXPECT_TRUE(straddles.noisy_because.starts_with("the ratio's interval [")) << straddles.noisy_because;
  EXPECT_NE(straddles.noisy_because.find("] reaches within 1 +- 5%"), std::string::npos) << straddles.noisy_because;
}

TEST(bench_compare, a_series_too_short_is_an_error) {
  EXPECT_THROW(compare_series(std::vector<double>{1}, std::vector<double>{1, 2, 3}), error);
}

class BenchFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opval_test_bench_compare_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A bench JSONL file of cases (descriptor, values; empty values = not timed), with the run's
  // environment warnings and each timed case's noise warnings.
  std::string write(const std::string& name, const std::vector<std::pair<std::string, std::vector<double>>>& cases,
                    const std::vector<std::string>& environment_warnings = {},
                    const std::vector<std::string>& noise_warnings = {}) {
    std::ofstream out(dir_ / name);
    for (const auto& [descriptor, values] : cases) {
      nlohmann::json j{{"schema", "opval-bench"}, {"descriptor", descriptor}, {"backend", "sim"}, {"seed", 1},
                       {"state", values.empty() ? "FAILED" : "PASSED"}, {"timed", !values.empty()}};
      j["timing"] = values.empty() ? nlohmann::json(nullptr) : nlohmann::json{{"values", values}, {"warnings", noise_warnings}};
      j["environment"] = {{"warnings", environment_warnings}};
      out << j.dump() << "\n";
    }
    return (dir_ / name).string();
  }

  fs::path dir_;
};

TEST_F(BenchFiles, cases_are_matched_by_identity_and_the_rest_say_why_not) {
  const std::string base = write("base.jsonl", {{"relu shape=1", times(50, 1e-6, 0.01, 1)},
                                                {"relu shape=2", times(50, 1e-6, 0.01, 2)},
                                                {"relu shape=3", {}},
                                                {"relu shape=4", times(50, 1e-6, 0.01, 3)}});
  const std::string next = write("new.jsonl", {{"relu shape=2", times(50, 1.5e-6, 0.01, 4)},
                                               {"relu shape=1", times(50, 1e-6, 0.01, 5)},
                                               {"relu shape=3", times(50, 1e-6, 0.01, 6)},
                                               {"relu shape=5", times(50, 1e-6, 0.01, 7)}});
  const std::vector<compared_case> cases = compare_bench_files(base, next);
  ASSERT_EQ(cases.size(), 5u);
  EXPECT_EQ(cases[0].change->verdict, change_verdict::same);
  EXPECT_EQ(cases[1].change->verdict, change_verdict::slower);
  EXPECT_EQ(cases[2].note, "not timed in BASE (FAILED)");
  EXPECT_EQ(cases[3].note, "only in BASE");
  EXPECT_EQ(cases[4].note, "only in NEW");
  EXPECT_EQ(cases[4].descriptor, "relu shape=5");
}

TEST_F(BenchFiles, the_warnings_recorded_in_either_file_make_a_change_too_noisy_and_the_table_says_why) {
  const std::string load = "other load on the machine: load average 2.10 on 2 CPUs (this run accounts for 1)";
  const std::string quiet = write("quiet.jsonl", {{"relu shape=1", times(50, 1e-6, 0.01, 1)}}, {"turbo boost is on"});
  const std::string slower = write("slower.jsonl", {{"relu shape=1", times(50, 1.4e-6, 0.01, 2)}});
  EXPECT_EQ(compare_bench_files(quiet, slower)[0].change->verdict, change_verdict::slower)
      << "a warning that is not about load or noise does not hide a change";
  const std::string loaded = write("loaded.jsonl", {{"relu shape=1", times(50, 1e-6, 0.01, 1)}}, {load});
  const std::string noisy = write("noisy.jsonl", {{"relu shape=1", times(50, 1.4e-6, 0.01, 2)}}, {},
                                  {"high variation: CV 7.1% > 5%"});
  std::vector<compared_case> cases = compare_bench_files(loaded, slower);
  EXPECT_EQ(cases[0].change->verdict, change_verdict::too_noisy);
  EXPECT_EQ(cases[0].change->noisy_because, "BASE recorded " + load);
  cases = compare_bench_files(quiet, noisy);
  EXPECT_EQ(cases[0].change->noisy_because, "NEW recorded noise: high variation: CV 7.1% > 5%");
  std::ostringstream table;
  EXPECT_TRUE(print_comparison(table, cases, {})) << "too noisy is no regression: exit 0";
  EXPECT_NE(table.str().find("too noisy to tell\n  too noisy: NEW recorded noise: high variation"), std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("0 slower, 0 faster, 0 same, 1 too noisy to tell"), std::string::npos) << table.str();
}

TEST_F(BenchFiles, unreadable_and_foreign_files_are_errors_naming_the_line) {
  const std::string good = write("good.jsonl", {{"relu shape=1", times(20, 1e-6, 0.01, 1)}});
  std::ofstream(dir_ / "run.jsonl") << "{\"schema_version\":1,\"descriptor\":\"relu shape=1\"}\n";
  std::ofstream(dir_ / "garbage.jsonl") << "\n{not json\n";
  auto message = [&](const std::string& other) {
    try {
      compare_bench_files(good, other);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message((dir_ / "run.jsonl").string()).find("run.jsonl:1: not an `opval bench` record"), std::string::npos);
  EXPECT_NE(message((dir_ / "garbage.jsonl").string()).find("garbage.jsonl:2:"), std::string::npos);
  EXPECT_NE(message((dir_ / "missing.jsonl").string()).find("cannot read benchmark file"), std::string::npos);
}

}  // namespace
}  // namespace opval
