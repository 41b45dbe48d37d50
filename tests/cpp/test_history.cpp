// The run history (history/history.hpp, history_queries.hpp, change_points.hpp; `opval
// history`, `--history`; docs/FLEET.md): the schema and its version, a planted history whose
// regression, flaky case and performance step the queries find, change points that a single
// outlier or noise does not make, and runs recorded by `opval run`, `opval merge` and `opval
// history record`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_testing.hpp"
#include "history/change_points.hpp"
#include "history/history.hpp"
#include "history/history_queries.hpp"
#include "history/history_report.hpp"
#include "history/sqlite.hpp"
#include "opval/error.hpp"
#include "opval/problem.hpp"
#include "opval/session.hpp"

namespace opval {
namespace {

namespace fs = std::filesystem;
using testing::cli_result;

class history_test : public ::testing::Test {
 protected:
  testing::scratch_dir dir_{"opval_test_history_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())};
  std::string db_path() const { return (dir_.path() / "history.db").string(); }
  cli_result opval(const std::vector<std::string>& args) const {
    return testing::run_cli(OPVAL_CLI_PATH, dir_.path(), args);
  }
};

case_result result_of(const std::string& descriptor, state st, double seconds = 1e-3, std::uint64_t seed = 1) {
  case_result r;
  r.descriptor = descriptor;
  r.op = descriptor.substr(0, descriptor.find(' '));
  r.backend = "sim";
  r.seed = seed;
  r.v.st = st;
  r.v.reason = st == state::passed ? "" : "planted";
  r.times.total = seconds;
  return r;
}

run_identity at_commit(const std::string& commit, const std::string& tier = "", std::optional<double> wall = {}) {
  return {.commit = commit, .tier = tier, .label = "test", .host = "testhost", .source = "test", .wall_seconds = wall};
}

TEST_F(history_test, a_new_file_gets_the_schema_and_reopening_keeps_it) {
  { history_db db(db_path(), true); EXPECT_EQ(db.schema_version(), history_schema_version); }
  history_db again(db_path(), false);
  EXPECT_EQ(again.schema_version(), history_schema_version);
  EXPECT_EQ(recorded_runs(again, 0).size(), 0u);
}

TEST_F(history_test, what_is_not_a_history_is_refused_naming_the_file) {
  EXPECT_THROW(history_db((dir_.path() / "missing.db").string(), false), error);
  {
    sqlite::connection foreign((dir_.path() / "foreign.db").string(), true);
    foreign.execute("CREATE TABLE t (x INTEGER)");
  }
  try {
    history_db((dir_.path() / "foreign.db").string(), true);
    FAIL() << "a foreign database was taken";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("not an opval history database"), std::string::npos) << e.what();
  }
  {
    sqlite::connection newer((dir_.path() / "newer.db").string(), true);
    newer.execute("PRAGMA user_version = 99");
  }
  try {
    history_db((dir_.path() / "newer.db").string(), true);
    FAIL() << "a newer schema was taken";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("newer than this opval"), std::string::npos) << e.what();
  }
  std::ofstream(dir_.path() / "text.db") << "not a database at all, but long enough to have a header of sorts\n";
  EXPECT_THROW(history_db((dir_.path() / "text.db").string(), true), error);
}

// Six commits: `regressed` passes at c1..c3 and fails from c4; `broken` never passes; `flaky`
// passes and fails at c5, and passes last; `skipped` is skipped at c6 (no verdict).
void plant_history(history_db& db) {
  for (int c = 1; c <= 6; ++c) {
    const std::string commit = "c" + std::to_string(c);
    std::vector<case_result> run = {
        result_of("relu shape=8 dt=f32:f32:f32", c >= 4 ? state::failed : state::passed, 1e-3 * c),
        result_of("relu shape=9 dt=f32:f32:f32", state::mistrusted, 5e-3),
        result_of("relu shape=10 dt=f32:f32:f32", state::passed, 2e-3),
        result_of("relu shape=11 dt=f32:f32:f32", c == 6 ? state::skipped : state::passed, 1e-4)};
    db.record_run(at_commit(commit, "smoke", 10.0 * c), run);
    if (c == 5) {  // the same commit again: the flaky case fails this time
      run[2].v.st = state::failed;
      db.record_run(at_commit(commit, "smoke", 50.0), run);
    }
  }
}

TEST_F(history_test, failing_says_since_which_commit_and_where_it_last_passed) {
  history_db db(db_path(), true);
  plant_history(db);
  const std::vector<failing_case> failing = failing_cases(db, {});
  ASSERT_EQ(failing.size(), 2u);
  const failing_case& regressed = failing[0];  // the newest regression first
  EXPECT_EQ(regressed.c.descriptor, "relu shape=8 dt=f32:f32:f32");
  EXPECT_EQ(regressed.since.commit, "c4");
  ASSERT_TRUE(regressed.last_pass);
  EXPECT_EQ(regressed.last_pass->commit, "c3");
  EXPECT_EQ(regressed.failing_runs, 4);  // c4, c5 twice, c6
  EXPECT_EQ(regressed.state, "FAILED");
  const failing_case& broken = failing[1];
  EXPECT_EQ(broken.c.descriptor, "relu shape=9 dt=f32:f32:f32");
  EXPECT_EQ(broken.since.commit, "c1");
  EXPECT_FALSE(broken.last_pass);
  EXPECT_EQ(broken.state, "MISTRUSTED");
  // Filters.
  EXPECT_EQ(failing_cases(db, {.text = "shape=9"}).size(), 1u);
  EXPECT_EQ(failing_cases(db, {.backend = "onednn"}).size(), 0u);
  EXPECT_EQ(failing_cases(db, {.limit = 1}).size(), 1u);
}

TEST_F(history_test, flaky_is_two_verdicts_at_one_commit) {
  history_db db(db_path(), true);
  plant_history(db);
  const std::vector<flaky_case> flaky = flaky_cases(db, {});
  ASSERT_EQ(flaky.size(), 1u);
  EXPECT_EQ(flaky[0].c.descriptor, "relu shape=10 dt=f32:f32:f32");
  EXPECT_EQ(flaky[0].commit, "c5");
  EXPECT_EQ(flaky[0].passed, 1);
  EXPECT_EQ(flaky[0].failed, 1);
  // The regression changed verdict between commits, not at one: not flaky.
  const std::map<std::string, case_history> h = case_histories(db);
  const case_history& regressed = h.at(history_case_key(result_of("relu shape=8 dt=f32:f32:f32", state::passed)));
  EXPECT_FALSE(regressed.flaky);
  EXPECT_TRUE(regressed.failed_last);
  EXPECT_EQ(regressed.recent_failures, 4);
  EXPECT_EQ(regressed.failed_at, "c6");
  EXPECT_NEAR(*regressed.seconds, 5e-3, 1e-12);  // the median of its latest 5 times: 2,3,4,5,5,6 ms less the first
  const case_history& flaky_one = h.at(history_case_key(result_of("relu shape=10 dt=f32:f32:f32", state::passed)));
  EXPECT_TRUE(flaky_one.flaky);
  EXPECT_FALSE(flaky_one.failed_last);
}

TEST_F(history_test, slowest_and_tiers) {
  history_db db(db_path(), true);
  plant_history(db);
  const std::vector<slow_case> slow = slowest_cases(db, {}, 3);
  ASSERT_EQ(slow.size(), 4u);
  EXPECT_EQ(slow[0].c.descriptor, "relu shape=8 dt=f32:f32:f32");  // 5, 5, 6 ms
  EXPECT_NEAR(slow[0].median_seconds, 5e-3, 1e-12);
  EXPECT_EQ(slow[0].runs, 3);
  EXPECT_EQ(slow[3].c.descriptor, "relu shape=11 dt=f32:f32:f32");
  const std::vector<tier_runtime> tiers = tier_runtimes(db);
  ASSERT_EQ(tiers.size(), 1u);
  EXPECT_EQ(tiers[0].tier, "smoke");
  EXPECT_EQ(tiers[0].runs.size(), 7u);
  EXPECT_EQ(tiers[0].runs.back().failed, 2);
}

TEST(change_points, a_persistent_step_is_found_where_it_starts) {
  std::vector<double> series;
  for (int i = 0; i < 12; ++i) series.push_back((i < 6 ? 1.0 : 1.5) * (1 + 0.01 * std::sin(i * 1.7)));
  const std::vector<change_point> c = find_change_points(series);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].index, 6u);
  EXPECT_NEAR(c[0].ratio, 1.5, 0.03);
  EXPECT_LT(c[0].p_value, 0.05);
}

TEST(change_points, two_steps_are_two_changes) {
  std::vector<double> series;
  for (int i = 0; i < 24; ++i) series.push_back((i < 8 ? 1.0 : i < 16 ? 2.0 : 1.2) * (1 + 0.02 * std::cos(i * 2.3)));
  const std::vector<change_point> c = find_change_points(series);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].index, 8u);
  EXPECT_EQ(c[1].index, 16u);
  EXPECT_GT(c[0].ratio, 1.8);
  EXPECT_LT(c[1].ratio, 0.7);
}

TEST(change_points, noise_an_outlier_and_a_small_shift_are_no_change) {
  std::vector<double> noise, outlier, small, short_series;
  for (int i = 0; i < 20; ++i) {
    noise.push_back(1 + 0.1 * std::sin(i * 12.9898) * std::cos(i * 78.233));
    outlier.push_back(i == 10 ? 5.0 : 1 + 0.01 * std::sin(i * 3.1));
    small.push_back((i < 10 ? 1.0 : 1.02) * (1 + 0.001 * std::sin(i * 3.1)));  // significant, under 5%
  }
  EXPECT_TRUE(find_change_points(noise).empty());
  EXPECT_TRUE(find_change_points(outlier).empty());
  EXPECT_TRUE(find_change_points(small).empty());
  EXPECT_EQ(find_change_points(small, {.threshold = 0.01}).size(), 1u);
  // Fewer than twice the minimum segment: nothing can be told.
  EXPECT_TRUE(find_change_points(std::vector<double>{1, 1, 1, 2, 2}).empty());
}

TEST_F(history_test, a_latency_step_in_benchmarks_is_a_trend_with_its_commit) {
  history_db db(db_path(), true);
  for (int c = 1; c <= 10; ++c) {
    bench_record r{.descriptor = "matmul m=64 n=64 k=64 dt=f32:f32:f32", .op = "matmul", .backend = "sim",
                   .state = "PASSED", .seed = 1, .timed = true};
    r.median = (c >= 6 ? 1.3e-4 : 1e-4) * (1 + 0.005 * std::sin(c));
    r.ci_low = r.median * 0.99, r.ci_high = r.median * 1.01;
    bench_record flat = r;
    flat.descriptor = "relu shape=1024 dt=f32:f32:f32", flat.op = "relu", flat.median = 2e-6 * (1 + 0.005 * std::cos(c));
    db.record_bench(at_commit("c" + std::to_string(c)), std::vector<bench_record>{r, flat});
  }
  const std::vector<case_trend> changed = case_trends(db, {}, trend_metric::latency, false);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].c.op, "matmul");
  ASSERT_EQ(changed[0].changes.size(), 1u);
  EXPECT_EQ(changed[0].points[changed[0].changes[0].index].at.commit, "c6");
  EXPECT_NEAR(changed[0].changes[0].ratio, 1.3, 0.02);
  EXPECT_EQ(case_trends(db, {}, trend_metric::latency, true).size(), 2u);
  // Benchmarks are not runs: no verdict history from them.
  EXPECT_TRUE(failing_cases(db, {}).empty());
  EXPECT_TRUE(case_trends(db, {}, trend_metric::case_time, true).empty());
}

TEST_F(history_test, the_report_charts_the_historys_trends_with_their_change) {
  {
    history_db db(db_path(), true);
    for (int c = 1; c <= 10; ++c) {
      bench_record r{.descriptor = "matmul m=64 n=64 k=64 dt=f32:f32:f32", .op = "matmul", .backend = "sim",
                     .state = "PASSED", .seed = 1, .timed = true};
      r.median = (c >= 6 ? 1.3e-4 : 1e-4) * (1 + 0.005 * std::sin(c));
      db.record_bench(at_commit("c" + std::to_string(c), "nightly", 100.0 + c), std::vector<bench_record>{r});
    }
  }
  const std::vector<trend_series> series = history_trend_series(db_path());
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].name, "matmul m=64 n=64 k=64 dt=f32:f32:f32 on sim: x1.30 at commit c6");
  EXPECT_EQ(series[0].points.size(), 10u);
  EXPECT_EQ(series[0].points[5].first, "c6");
  EXPECT_EQ(series[1].name, "tier nightly: wall time");
  // On the command line: the report's trends section holds the chart and its title.
  cli_result r = opval({"run", "--op", "relu", "--jsonl", "run.jsonl", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = opval({"report", "run.jsonl", "--history", db_path(), "--output", "report.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = testing::read_all(dir_.path() / "report.html");
  const std::size_t trends = html.find("<section id=\"trends\">");
  ASSERT_NE(trends, std::string::npos);
  EXPECT_NE(html.find("x1.30 at commit c6", trends), std::string::npos);
  EXPECT_NE(html.find("chart line-chart", trends), std::string::npos);
  EXPECT_EQ(html.find("No run history was given"), std::string::npos);
  r = opval({"report", "run.jsonl", "--history", "run.jsonl", "--output", "bad.html"});
  EXPECT_EQ(r.code, 2) << r.err;
}

TEST_F(history_test, run_and_merge_record_and_history_answers_on_the_command_line) {
  const std::vector<std::string> selection = {"--op", "relu", "--tag", "smoke", "-q"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), selection.begin(), selection.end());
    return args;
  };
  cli_result r = opval(with({"run", "--history", "h.db", "--commit", "c1", "--tier", "smoke", "--jsonl", "c1.jsonl"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("recorded 20 cases in history 'h.db' (run 1, commit c1)"), std::string::npos) << r.err;
  // A shard records nothing; the merge records the whole run.
  for (const char* i : {"0", "1"}) {
    r = opval(with({"run", "--history", "h.db", "--shard", std::string(i) + "/2", "--jsonl", std::string("s") + i + ".jsonl"}));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("recorded"), std::string::npos) << r.err;
  }
  r = opval({"merge", "s0.jsonl", "s1.jsonl", "--history", "h.db", "--commit", "c2", "--tier", "smoke", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("(run 2, commit c2)"), std::string::npos) << r.err;
  // A planted regression, recorded from a journal: one case of c1's run failing at c3.
  std::ifstream in(dir_.path() / "c1.jsonl");
  std::ofstream bad(dir_.path() / "c3.jsonl");
  int line_no = 0;
  for (std::string line; std::getline(in, line); ++line_no) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (line_no == 3) j["state"] = "FAILED", j["reason"] = "planted regression";
    bad << j.dump() << '\n';
  }
  bad.close();
  r = opval({"history", "record", "c3.jsonl", "--db", "h.db", "--commit", "c3", "--tier", "smoke"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("as run 3 (commit c3)"), std::string::npos) << r.out;
  r = opval({"history", "failing", "--db", "h.db", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json failing = nlohmann::json::parse(r.out);
  ASSERT_EQ(failing.size(), 1u) << r.out;
  EXPECT_EQ(failing[0]["since"]["commit"], "c3");
  EXPECT_EQ(failing[0]["last_pass"]["commit"], "c2");
  EXPECT_EQ(failing[0]["reason"], "planted regression");
  r = opval({"history", "failing", "--db", "h.db"});
  EXPECT_NE(r.out.find("FAILED since commit c3 (run 3,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("last passed at commit c2 (run 2,"), std::string::npos) << r.out;
  r = opval({"history", "tiers", "--db", "h.db"});
  EXPECT_NE(r.out.find("tier smoke: 3 runs"), std::string::npos) << r.out;
  // Bad input: one line, exit code 2.
  for (const std::vector<std::string>& bad_args :
       {std::vector<std::string>{"history", "failing", "--db", "missing.db"},
        {"history", "fialing", "--db", "h.db"},
        {"history", "record", "nothing.jsonl", "--db", "h.db"},
        {"history", "record", "c1.jsonl", "--db", "c1.jsonl"}}) {
    r = opval(bad_args);
    EXPECT_EQ(r.code, 2) << bad_args[1] << ' ' << bad_args[2] << ": " << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace opval
