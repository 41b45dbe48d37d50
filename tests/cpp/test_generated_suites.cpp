// Generated suites (core/suite_generator.hpp, docs/COVERAGE.md): every op's feature table makes a
// suite in which each value runs alone at each contract its kernel supports, pairs are combined
// within the budget, a kernel's refusals shape the suite and are reported, and the same seed
// gives the same suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_testing.hpp"
#include "core/suite_generator.hpp"
#include "opval/backend.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/session.hpp"

namespace opval {
namespace {

support_query sim_support() {
  static const std::shared_ptr<backend> sim = make_backend("sim");
  return [](const problem& p) { return sim->supports(p); };
}

std::vector<std::string> lines_of(const generated_suite& g) {
  std::vector<std::string> out;
  for (const located_problem& lp : g.problems) out.push_back(lp.prob.to_string());
  return out;
}

bool holds(const std::string& descriptor, const std::string& fragment) {
  std::istringstream words(fragment);
  for (std::string w; words >> w;)
    if ((" " + descriptor + " ").find(" " + w + " ") == std::string::npos) return false;
  return true;
}

// Every op: the base runs at every contract on sim, every value runs alone somewhere, and the
// default budget covers every pair sim supports.
TEST(GeneratedSuites, EveryOpCoversEveryValueAloneAndEveryPairOnSim) {
  for (const op_spec* op : all_ops()) {
    SCOPED_TRACE(std::string(op->name()));
    const generated_suite g = generate_suite(*op, sim_support(), {});
    ASSERT_FALSE(g.problems.empty());
    EXPECT_FALSE(op->features().features.empty());
    for (const contract_coverage& c : g.coverage.contracts) {
      EXPECT_EQ(c.refused, "") << c.contract;
      EXPECT_EQ(c.pairs_over_budget, 0) << c.contract;
      EXPECT_EQ(c.pairs_refused, 0) << c.contract;
      EXPECT_LE(c.cases, 200) << c.contract;
    }
    for (const value_coverage& v : g.coverage.values) {
      EXPECT_FALSE(v.alone.empty()) << v.feature << " " << v.value << " never ran alone";
      EXPECT_TRUE(v.refused.empty()) << v.feature << " " << v.value;
    }
  }
}

TEST(GeneratedSuites, SameSeedSameSuiteOtherSeedSameValuesAlone) {
  const op_spec& op = find_op("attention");
  const generated_suite a = generate_suite(op, sim_support(), {.seed = 3});
  const generated_suite b = generate_suite(op, sim_support(), {.seed = 3});
  const generated_suite c = generate_suite(op, sim_support(), {.seed = 4});
  EXPECT_EQ(lines_of(a), lines_of(b));
  EXPECT_NE(lines_of(a), lines_of(c));  // the pairs are combined in another order
  for (std::size_t i = 0; i < a.coverage.values.size(); ++i)
    EXPECT_EQ(a.coverage.values[i].alone, c.coverage.values[i].alone);
}

// A kernel with one contract, no top-left causal mask and no grouped heads: every other value
// still runs alone at its contract, nothing it refuses is in the suite, and the report says why.
TEST(GeneratedSuites, FollowsWhatTheKernelSupports) {
  const op_spec& op = find_op("attention");
  const support_query narrow = [](const problem& p) {
    if (p.dt.types_string() != "bf16:f32:bf16" || !(p.dt.mid == dtype::f32)) return support::unimplemented("bf16 only");
    if (p.get_choice("causal") == "top_left") return support::unimplemented("no top-left causal mask");
    if (p.get_int("hkv") != 0 && p.get_int("hkv") != p.get_int("h")) return support::unimplemented("no grouped heads");
    return support::yes();
  };
  const generated_suite g = generate_suite(op, narrow, {});
  ASSERT_FALSE(g.problems.empty());
  for (const located_problem& lp : g.problems) {
    EXPECT_TRUE(narrow(lp.prob).ok) << lp.prob.to_string();
    EXPECT_EQ(lp.source.rfind("attention generated #", 0), 0u);
  }
  int contracts_run = 0;
  for (const contract_coverage& c : g.coverage.contracts) contracts_run += c.refused.empty();
  EXPECT_EQ(contracts_run, 1);
  for (const value_coverage& v : g.coverage.values) {
    const bool refused = v.value == "causal=top_left" || v.value.starts_with("h=");
    EXPECT_EQ(v.alone.empty(), refused) << v.value;
    if (refused) {
      ASSERT_EQ(v.refused.size(), 1u) << v.value;
      EXPECT_EQ(v.refused[0].first, "bf16:f32:bf16");
      EXPECT_NE(v.refused[0].second.find("no "), std::string::npos);
    }
  }
  // The feature the kernel has runs alone: causal=bottom_right with nothing else changed.
  const problem expected = parse_problem("attention b=2 h=2 lq=13 lk=29 d=24 causal=bottom_right dt=bf16:f32:bf16");
  const auto alone = std::find_if(g.problems.begin(), g.problems.end(),
                                  [&](const located_problem& lp) { return lp.prob == expected; });
  EXPECT_NE(alone, g.problems.end());
}

// The values alone always run; pairs stop at the budget, and the report counts those left.
TEST(GeneratedSuites, BudgetBoundsThePairsNotTheValuesAlone) {
  const op_spec& op = find_op("matmul");
  const generated_suite g = generate_suite(op, sim_support(), {.budget = 1, .contracts = {"f32"}});
  ASSERT_EQ(g.coverage.contracts.size(), 1u);
  const contract_coverage& c = g.coverage.contracts[0];
  std::size_t values = 0;
  for (const suite_feature& f : op.features().features) values += f.values.size();
  EXPECT_EQ(c.pairs_covered, 0);
  EXPECT_GT(c.pairs_over_budget, 100);
  EXPECT_GE(static_cast<std::size_t>(c.cases) + 1, values);  // base + the values alone, some not applicable
  EXPECT_THROW(generate_suite(op, sim_support(), {.budget = 0}), error);
}

TEST(GeneratedSuites, ContractsSelectedByTheirTypes) {
  const generated_suite g = generate_suite(find_op("attention"), sim_support(), {.contracts = {"bf16"}});
  std::set<std::string> seen;
  for (const contract_coverage& c : g.coverage.contracts) seen.insert(c.contract);
  EXPECT_EQ(seen, (std::set<std::string>{"bf16:f32:bf16", "bf16:f32:bf16 mid=bf16"}));
}

// Values that make no valid problem at a contract are reported as not applicable there, not as
// refusals: cast's tie-breaking fill needs many values in both types.
TEST(GeneratedSuites, NotApplicableIsNotRefused) {
  const generated_suite g = generate_suite(find_op("cast"), sim_support(), {.contracts = {"f32:f32:f8_e4m3", "f32:f32:bf16"}});
  const auto ties = std::find_if(g.coverage.values.begin(), g.coverage.values.end(),
                                 [](const value_coverage& v) { return v.value == "fill=ties"; });
  ASSERT_NE(ties, g.coverage.values.end());
  EXPECT_EQ(ties->alone, std::vector<std::string>{"f32:f32:bf16"});
  ASSERT_EQ(ties->inapplicable.size(), 1u);
  EXPECT_NE(ties->inapplicable[0].second.find("tie-breaking"), std::string::npos);
  EXPECT_TRUE(ties->refused.empty());
}

TEST(GeneratedSuites, CoverageJsonAndConsole) {
  generated_suite g = generate_suite(find_op("relu"), sim_support(), {.contracts = {"f32"}});
  g.coverage.backend = "sim";
  const nlohmann::json j = nlohmann::json::parse(coverage_json(g.coverage));
  EXPECT_EQ(j.at("coverage").at("op"), "relu");
  EXPECT_EQ(j.at("coverage").at("backend"), "sim");
  EXPECT_EQ(j.at("coverage").at("contracts").size(), 1u);
  EXPECT_EQ(j.at("coverage").at("values").size(), g.coverage.values.size());
  std::ostringstream out;
  print_coverage({g.coverage}, false, 100, out);
  EXPECT_NE(out.str().find("relu on sim:"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("1 of 1 contracts"), std::string::npos) << out.str();
}

// ---------------------------------------------------------------- the CLI

using testing::run_cli;
using testing::scratch_dir;

// `opval coverage` asks a plugin's supports() in its worker, runs nothing, and reports the
// refusals with the plugin's reasons.
TEST(GeneratedSuitesCli, CoverageOfAPluginWithoutRunningIt) {
  scratch_dir dir("opval_coverage_cli");
  const auto r = run_cli(OPVAL_CLI_PATH, dir.path(),
                         {"coverage", "--plugin", OPVAL_FLASH_ATTENTION, "--op", "attention", "--jsonl", "cov.jsonl"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("attention on plugin:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("generated cases for plugin:"), std::string::npos) << r.out;
  std::istringstream lines(testing::read_all(dir.path() / "cov.jsonl"));
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("coverage").at("op"), "attention");
  // A plugin that implements no matmul: every contract refused, with its reason, exit 1.
  const auto none = run_cli(OPVAL_CLI_PATH, dir.path(), {"coverage", "--plugin", OPVAL_FLASH_ATTENTION, "--op", "relu"});
  EXPECT_EQ(none.code, 1) << none.out << none.err;
  EXPECT_NE(none.out.find("contracts refused:"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("implements attention only"), std::string::npos) << none.out;
}

// `opval run --tag generated` runs the suite made for the backend, prints the coverage before
// the closing line, journals it first, and a resumed run skips the coverage records.
TEST(GeneratedSuitesCli, RunTheGeneratedSuiteAndResumeIt) {
  scratch_dir dir("opval_generated_run");
  const std::vector<std::string> args = {"run", "--tag", "generated", "--op", "relu", "--contract", "f16:f32:f16",
                                         "--suite-budget", "30", "--jsonl", "run.jsonl"};
  const auto r = run_cli(OPVAL_CLI_PATH, dir.path(), args);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Coverage of the generated suite (seed 1, at most 30 cases"), std::string::npos) << r.out;
  EXPECT_LT(r.out.find("Coverage of the generated suite"), r.out.rfind("passed")) << r.out;
  const std::string journal = testing::read_all(dir.path() / "run.jsonl");
  EXPECT_EQ(journal.rfind(R"({"coverage":)", 0), 0u) << journal.substr(0, 200);
  std::vector<std::string> resumed = args;
  resumed.resize(resumed.size() - 2);
  resumed.insert(resumed.end(), {"--resume", "run.jsonl"});
  const auto again = run_cli(OPVAL_CLI_PATH, dir.path(), resumed);
  EXPECT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_NE(again.err.find("run now"), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find("match no case"), std::string::npos) << again.err;
  // Another command than run, or a selection function, cannot make it: one clear line.
  const auto bench = run_cli(OPVAL_CLI_PATH, dir.path(), {"bench", "--tag", "generated", "--op", "relu"});
  EXPECT_EQ(bench.code, 2);
  EXPECT_NE(bench.err.find("--tag generated makes a suite for the kernel under test"), std::string::npos) << bench.err;
}

// The tester tested: sim, a correct implementation of every contract, passes every op's whole
// generated suite (the combinations no hand-written suite makes found false alarms of the judge;
// docs/COVERAGE.md, "What the first generated runs found").
TEST(GeneratedSuitesOnSim, SimPassesEveryGeneratedCase) {
  scratch_dir dir("opval_generated_sim");
  const auto r = run_cli(OPVAL_CLI_PATH, dir.path(), {"run", "--tag", "generated", "--quiet"});
  EXPECT_EQ(r.code, 0) << r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0) << r.err;
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out.substr(r.out.size() > 2000 ? r.out.size() - 2000 : 0);
}

}  // namespace
}  // namespace opval
