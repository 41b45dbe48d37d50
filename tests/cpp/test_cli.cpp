// The opval binary as users and scripts see it: exit codes, the one-line errors naming the
// bad token, the closing line, repro output, JSONL files, and help text that matches
// docs/CLI.md. Op-specific cases pick an op from the registry, so they follow whatever ops
// this build contains (and skip when it contains none).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_testing.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/verdict.hpp"

#ifndef OPVAL_CLI_PATH
#error "tests/cpp/CMakeLists.txt must define OPVAL_CLI_PATH for test_cli"
#endif

namespace opval {
namespace {

namespace fs = std::filesystem;

using testing::cli_result;
using testing::quote;
using testing::read_all;

/// A scratch directory per test, removed afterwards.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / (std::string("opval_test_cli_") + info->name() + "_" +
                                        std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs opval with `args` (each one shell word) in the scratch directory.
  cli_result opval(const std::vector<std::string>& args) const { return testing::run_cli(OPVAL_CLI_PATH, dir_, args); }

  /// Bad input: exit 2, nothing on stdout, exactly one line on stderr naming `token`.
  void expect_bad_input(const std::vector<std::string>& args, const std::string& token) const {
    cli_result r = opval(args);
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_TRUE(r.err.starts_with("opval: error: ")) << r.err;
    EXPECT_NE(r.err.find(token), std::string::npos) << "'" << token << "' not named in: " << r.err;
    EXPECT_EQ(r.out, "");
  }

  fs::path dir_;
};

/// The op the op-specific tests use: matmul when built, else the first registered op.
const op_spec* test_op() {
  for (const op_spec* op : all_ops())
    if (op->name() == "matmul") return op;
  for (const op_spec* op : all_ops())
    if (!op->suite("smoke").empty()) return op;
  return nullptr;
}

#define REQUIRE_OP(op)                                             \
  const op_spec* op = test_op();                                   \
  if (!op) GTEST_SKIP() << "this build registers no op with a smoke suite"

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') + 1);
}

const std::regex closing_line(R"(\d+ passed, \d+ failed, \d+ skipped)");

TEST_F(CliTest, BadCommandLineIsOneLineAndExit2) {
  expect_bad_input({}, "subcommand");
  expect_bad_input({"frobnicate"}, "frobnicate");
  expect_bad_input({"run", "--no-such-option"}, "--no-such-option");
  expect_bad_input({"list", "things"}, "things");
  expect_bad_input({"run", "--tag", "nightly"}, "nightly");
  expect_bad_input({"run", "--op", "no_such_op"}, "no_such_op");
  expect_bad_input({"run", "--backend", "no_such_backend"}, "no_such_backend");
  expect_bad_input({"run", "--policy", "no_such_policy"}, "no_such_policy");
  expect_bad_input({"run", "--policy", "fixed:rtol=abc"}, "abc");
  expect_bad_input({"run", "--contract", "bf17"}, "bf17");
  expect_bad_input({"run", "--problems", "no/such/file.txt"}, "no/such/file.txt");
  expect_bad_input({"repro", "no_such_op m=1", "--seed", "1"}, "no_such_op");
}

TEST_F(CliTest, BadDescriptorNamesTheBadToken) {
  REQUIRE_OP(op);
  std::string name(op->name());
  expect_bad_input({"run", "--problems", name + " no_such_attr=1"}, "no_such_attr");
  expect_bad_input({"run", "--problems", name + " dt=bf17"}, "bf17");
  expect_bad_input({"repro", name + " dt=bf17", "--seed", "1"}, "bf17");
  expect_bad_input({"run", "--problems", name + " fill=no_such_fill"}, "no_such_fill");
  for (const attr_def& d : op->schema().defs()) {
    if (d.kind != attr_kind::integer) continue;
    expect_bad_input({"run", "--problems", name + " " + d.name + "=abc"}, "abc");
    // An impossible shape: validate() must reject it before anything runs.
    if (d.min > 0) expect_bad_input({"run", "--problems", name + " " + d.name + "=0"}, d.name);
    break;
  }
}

TEST_F(CliTest, BadBatchFileNamesFileAndLine) {
  REQUIRE_OP(op);
  std::ofstream(dir_ / "bad.txt") << "# a comment\n\n" << op->suite("smoke").front() << "\n"
                                  << op->name() << " no_such_attr=3\n";
  expect_bad_input({"run", "--problems", "bad.txt"}, "bad.txt:4");
}

TEST_F(CliTest, ListCommands) {
  cli_result ops = opval({"list", "ops"});
  EXPECT_EQ(ops.code, 0) << ops.err;
  for (const op_spec* op : all_ops()) {
    EXPECT_NE(ops.out.find(std::string(op->name())), std::string::npos) << ops.out;
    for (const std::string& c : op->contracts()) EXPECT_NE(ops.out.find(c), std::string::npos);
  }
  cli_result backends = opval({"list", "backends"});
  EXPECT_EQ(backends.code, 0);
  EXPECT_TRUE(std::regex_search(backends.out, std::regex(R"((^|\n)sim\s)"))) << backends.out;
  cli_result policies = opval({"list", "policies"});
  EXPECT_EQ(policies.code, 0);
  for (const char* p : {"bound", "relative-to-sim", "exact", "fixed"})
    EXPECT_NE(policies.out.find(p), std::string::npos) << policies.out;
  for (const char* what : {"suites", "contracts"}) EXPECT_EQ(opval({"list", what}).code, 0) << what;
  cli_result verbose = opval({"list", "ops", "-v"});
  EXPECT_EQ(verbose.code, 0);
  if (!all_ops().empty()) EXPECT_NE(verbose.out.find("fills:"), std::string::npos);
}

TEST_F(CliTest, PassingDescriptorExits0WithTheClosingLine) {
  REQUIRE_OP(op);
  cli_result r = opval({"run", "--problems", op->suite("smoke").front(), "--jsonl", "out/r.jsonl"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out), "1 passed, 0 failed, 0 skipped") << r.out;
  std::istringstream lines(read_all(dir_ / "out/r.jsonl"));
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["op"], std::string(op->name()));
  EXPECT_EQ(j["source"], "<command line>");
  EXPECT_EQ(j["state"], std::string(to_string(state::passed)));
  EXPECT_FALSE(std::getline(lines, line)) << "one record per case";
}

TEST_F(CliTest, BatchFileRunsEveryLineAndRecordsItsSource) {
  REQUIRE_OP(op);
  std::vector<std::string> smoke = op->suite("smoke");
  std::ofstream(dir_ / "batch.txt") << "# two cases\n" << smoke.front() << "   # trailing comment\n\n"
                                    << smoke.back() << "\n";
  cli_result r = opval({"run", "--problems", "batch.txt", "--jsonl", "b.jsonl", "--seed", "5"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out), "2 passed, 0 failed, 0 skipped") << r.out;
  std::istringstream lines(read_all(dir_ / "b.jsonl"));
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0]["source"].get<std::string>().ends_with("batch.txt:2"));
  EXPECT_TRUE(records[1]["source"].get<std::string>().ends_with("batch.txt:4"));
  EXPECT_EQ(records[1]["seed"], 5);
}

TEST_F(CliTest, ContractFilterSelectsByCanonicalContract) {
  REQUIRE_OP(op);
  std::string first = parse_problem(op->suite("smoke").front()).dt.types_string();
  cli_result r = opval({"run", "--op", std::string(op->name()), "--contract", first, "--jsonl", "c.jsonl"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  std::istringstream lines(read_all(dir_ / "c.jsonl"));
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n)
    EXPECT_EQ(nlohmann::json::parse(line)["contract"], first);
  EXPECT_GT(n, 0);
}

/// A case judged by a policy it cannot meet (bitwise equality with the unrounded fp64
/// reference): exit 1, the failure explained with its repro command.
TEST_F(CliTest, FailingCaseExits1AndPrintsRepro) {
  REQUIRE_OP(op);
  for (const std::string& d : op->suite("smoke")) {
    cli_result r = opval({"run", "--problems", d, "--policy", "exact"});
    if (r.code == 0) continue;  // an exactly representable result: try the next case
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_EQ(last_line(r.out), "0 passed, 1 failed, 0 skipped") << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  repro: opval repro '[^']+' --seed 1 --backend sim --policy exact\n)")))
        << r.out;
    return;
  }
  GTEST_SKIP() << "every smoke case of " << op->name() << " is exact";
}

/// The repro says every case option the run was given, and rerunning it gives the same verdict.
TEST_F(CliTest, ReproCarriesTheRunsCaseOptionsAndFailsTheSameWay) {
  REQUIRE_OP(op);
  for (const std::string& d : op->suite("smoke")) {
    cli_result r = opval({"run", "--problems", d, "--policy", "exact", "--no-perturb", "--threads", "1", "--worst", "2"});
    if (r.code == 0) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(
  repro: opval repro '([^']+)' (.*)
)"))) << r.out;
    EXPECT_EQ(m[2].str(), "--seed 1 --backend sim --policy exact --worst 2 --no-perturb --threads 1");
    std::vector<std::string> again = {"repro", m[1].str()};
    for (const char* a : {"--seed", "1", "--backend", "sim", "--policy", "exact", "--worst", "2", "--no-perturb", "--threads", "1"})
      again.emplace_back(a);
    cli_result rerun = opval(again);
    EXPECT_EQ(rerun.code, 1) << rerun.out;
    EXPECT_NE(rerun.out.find("repro: opval repro '" + m[1].str() + "' " + m[2].str()), std::string::npos) << rerun.out;
    return;
  }
  GTEST_SKIP() << "every smoke case of " << op->name() << " is exact";
}

TEST_F(CliTest, ReproPrintsWorstElements) {
  REQUIRE_OP(op);
  cli_result r = opval({"repro", op->suite("smoke").front(), "--seed", "3", "--worst", "2"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("worst elements:"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n\s+\[\d+(,\d+)*\]\s+\S+\s+\S+)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(repro: opval repro '[^']+' --seed 3 --backend sim)")));
  EXPECT_TRUE(std::regex_match(last_line(r.out), closing_line));
}

TEST_F(CliTest, SeveralBackendsAreComparedSideBySide) {
  if (!std::regex_search(opval({"list", "backends"}).out, std::regex(R"((^|\n)openblas\s)")))
    GTEST_SKIP() << "this build has no openblas backend";
  cli_result r = opval({"run", "--backend", "sim,openblas", "--problems", "matmul m=17 n=9 k=33",
                        "--jsonl", "r.jsonl"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nside by side\s+sim\s+openblas\n)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nper backend:\n\s+sim\s+1 passed)"))) << r.out;
  EXPECT_EQ(last_line(r.out), "2 passed, 0 failed, 0 skipped") << r.out;
  std::istringstream lines(read_all(dir_ / "r.jsonl"));
  std::set<std::string> backends;
  for (std::string line; std::getline(lines, line);)
    backends.insert(nlohmann::json::parse(line)["backend"].get<std::string>());
  EXPECT_EQ(backends, (std::set<std::string>{"sim", "openblas"})) << "one record per (case, backend)";
  // The same backends given by repeating the option.
  cli_result repeated = opval({"run", "--backend", "sim", "--backend", "openblas", "--problems",
                               "matmul m=17 n=9 k=33"});
  EXPECT_EQ(repeated.code, 0) << repeated.out << repeated.err;
  EXPECT_NE(repeated.out.find("side by side"), std::string::npos) << repeated.out;
}

// --reference judges against another backend at the contract; the case runs in the worker
// process (the default isolation), which makes the reference itself from its name.
TEST_F(CliTest, ReferenceJudgesAgainstAnotherBackendInTheWorker) {
  REQUIRE_OP(op);
  const std::string problem = op->suite("smoke").front();
  cli_result r = opval({"run", "--backend", "sim", "--reference", "sim", "--problems", problem, "--jsonl", "r.jsonl"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(", judged against the reference sim (at the contract)\n"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_all(dir_ / "r.jsonl"));
  EXPECT_EQ(j["state"], "PASSED") << j.dump();
  EXPECT_EQ(j["reference"], "sim (at the contract)");
  EXPECT_NE(j["reference_note"].get<std::string>().find("sim (at the contract) vs opval's fp64 reference: output '"),
            std::string::npos) << j.dump();
  EXPECT_NE(j["repro"].get<std::string>().find(" --reference sim"), std::string::npos) << j.dump();
  expect_bad_input({"run", "--reference", "no_such_reference", "--problems", problem}, "no_such_reference");
}

// `opval bench`: each case checked, then timed; the table, the JSON record (the run record
// under "check", every sample) and the CSV agree; bad bench options are bad input.
TEST_F(CliTest, BenchChecksThenTimesEveryCaseAndWritesJsonAndCsv) {
  REQUIRE_OP(op);
  const std::string problem = op->suite("smoke").front();
  cli_result r = opval({"bench", "--problems", problem, "--budget", "0.3", "--jsonl", "b.jsonl", "--csv", "b.csv"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(r.out.starts_with("opval bench: backend sim, policy bound")) << r.out;
  EXPECT_NE(r.out.find(" TIMED "), std::string::npos) << r.out;
  EXPECT_EQ(last_line(r.out), "1 timed, 0 failed, 0 skipped") << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_all(dir_ / "b.jsonl"));
  EXPECT_EQ(j["descriptor"], parse_problem(problem).to_string());
  EXPECT_EQ(j["state"], "PASSED");
  EXPECT_TRUE(j["timed"].get<bool>());
  EXPECT_EQ(j["check"]["descriptor"], j["descriptor"]) << "the run record of the check, with the same identity";
  const nlohmann::json& t = j["timing"];
  EXPECT_GT(t["median"].get<double>(), 0);
  EXPECT_LE(t["ci_low"].get<double>(), t["median"].get<double>());
  EXPECT_GE(t["ci_high"].get<double>(), t["median"].get<double>());
  EXPECT_EQ(t["values"].size(), t["samples"].get<std::size_t>());
  const nlohmann::json& env = j["environment"];
  EXPECT_FALSE(env["cpu_model"].get<std::string>().empty()) << env.dump();
  EXPECT_EQ(env["libraries"]["sim"], j["backend_version"]);
  EXPECT_TRUE(env["warnings"].is_array());
  std::istringstream csv(read_all(dir_ / "b.csv"));
  std::string header, row, extra;
  ASSERT_TRUE(std::getline(csv, header) && std::getline(csv, row));
  EXPECT_FALSE(std::getline(csv, extra));
  EXPECT_TRUE(header.starts_with("descriptor,op,contract,seed,backend,state,timed,median_s,")) << header;
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(row.begin(), row.end(), ',')) << row;
  cli_result pinned = opval({"bench", "--problems", problem, "--budget", "0.2", "--affinity", "0", "--omp-threads", "1",
                             "--jsonl", "pinned.jsonl"});
  EXPECT_EQ(pinned.code, 0) << pinned.out << pinned.err;
  const nlohmann::json p = nlohmann::json::parse(read_all(dir_ / "pinned.jsonl"));
  EXPECT_EQ(p["timing"]["threads"], 1);
  EXPECT_EQ(p["timing"]["affinity"], "0");
  EXPECT_TRUE(p["timing"]["counters"].is_null()) << "counted only when asked for";
  // --counters: per-call counts in the record and under the row; hardware ones, or the reason
  // this machine has none (this VM: perf_event_open(cycles) refused) and the software ones.
  cli_result counted = opval({"bench", "--problems", problem, "--budget", "0.2", "--counters", "--repetitions", "3",
                              "--jsonl", "c.jsonl"});
  EXPECT_EQ(counted.code, 0) << counted.out << counted.err;
  const nlohmann::json counted_timing = nlohmann::json::parse(read_all(dir_ / "c.jsonl"))["timing"];
  EXPECT_EQ(counted_timing["repetition_medians"].size(), 3u) << counted_timing.dump();
  EXPECT_EQ(p["timing"]["repetition_medians"].size(), 0u);
  const nlohmann::json& c = counted_timing["counters"];
  EXPECT_GE(c["calls"].get<std::uint64_t>(), 1u) << c.dump();
  EXPECT_GT(c["per_call"]["task-clock-ns"].get<double>(), 0) << c.dump();
  EXPECT_NE(counted.out.find("  counters per call ("), std::string::npos) << counted.out;
  if (c["hardware"].get<bool>()) {
    EXPECT_GT(c["ipc"].get<double>(), 0) << c.dump();
    EXPECT_NE(counted.out.find("(IPC "), std::string::npos) << counted.out;
  } else {
    EXPECT_NE(counted.out.find("  hardware counters: not available here (perf_event_open(cycles): "), std::string::npos)
        << counted.out;
  }
  expect_bad_input({"bench", "--problems", problem, "--cache", "warm"}, "--cache");
  expect_bad_input({"bench", "--problems", problem, "--target-ci", "0"}, "--target-ci");
}

// Peaks that pass the hierarchy check, for the machine a bench record's environment names.
void write_consistent_peaks(const std::string& file, const nlohmann::json& environment) {
  const auto figure = [](double one) { return nlohmann::json{{"one", one}, {"all", 2 * one}}; };
  const auto level = [&](const char* name, std::uint64_t bytes, double gbs) {
    return nlohmann::json{{"name", name}, {"bytes_per_cpu", bytes}, {"copy_gbs", figure(gbs)}, {"triad_gbs", figure(gbs)}};
  };
  fs::create_directories(fs::path(file).parent_path());
  std::ofstream(file) << nlohmann::json{{"schema", "opval-machine"}, {"schema_version", 1},
                                        {"cpu_model", environment["cpu_model"]}, {"kernel", environment["kernel"]},
                                        {"logical_cpus", environment["logical_cpus"]}, {"threads", 2},
                                        {"isa", "avx512"}, {"measured_at", "2026-01-01T00:00:00Z"},
                                        {"gflops", {{"f32", figure(100)}, {"f64", figure(50)}}},
                                        {"levels", {level("L2", 1 << 20, 80), level("L3", 16 << 20, 30), level("DRAM", 0, 10)}},
                                        {"stream_array_bytes", 64 << 20}}
                              .dump();
}

// `opval bench --machine` measures and saves the peaks; a later bench places each result on
// the roofline (the ROOF column, the record's timing.roofline); without the file it says why.
// A loaded machine can fail the hierarchy check honestly: then nothing is saved, the run says
// why with exit 1, and the results are placed under consistent peaks written for this machine.
TEST_F(CliTest, BenchMachinePeaksThenEachResultOnTheRoofline) {
  REQUIRE_OP(op);
  const std::string problem = op->suite("smoke").front();
  cli_result none = opval({"bench", "--problems", problem, "--budget", "0.2", "--machine-file", "none.json", "--jsonl", "n.jsonl"});
  EXPECT_NE(none.out.find("opval bench: no roofline: no machine peaks in none.json"), std::string::npos) << none.out;
  const nlohmann::json unplaced = nlohmann::json::parse(read_all(dir_ / "n.jsonl"));
  EXPECT_TRUE(unplaced["timing"]["roofline"].is_null());
  const std::string file = (dir_ / "peaks" / "machine.json").string();
  cli_result machine = opval({"bench", "--machine", "--stream-mib", "16", "--machine-file", file});
  EXPECT_NE(machine.out.find("f32 FMA"), std::string::npos) << machine.out;
  EXPECT_NE(machine.out.find("DRAM triad"), std::string::npos) << machine.out;
  if (machine.code == 1) {
    EXPECT_NE(machine.out.find("opval bench --machine: not saved: after 3 measurements the figures are not a "
                               "consistent hierarchy"),
              std::string::npos)
        << machine.out;
    EXPECT_FALSE(fs::exists(file)) << "refused figures are never saved";
    write_consistent_peaks(file, unplaced["environment"]);
  } else {
    EXPECT_EQ(machine.code, 0) << machine.out << machine.err;
    EXPECT_EQ(last_line(machine.out), "saved to " + file);
  }
  cli_result placed = opval({"bench", "--problems", problem, "--budget", "0.2", "--machine-file", file, "--jsonl", "r.jsonl"});
  EXPECT_EQ(placed.code, 0) << placed.out << placed.err;
  EXPECT_NE(placed.out.find("opval bench: the roofline of this machine from " + file), std::string::npos) << placed.out;
  const nlohmann::json roof = nlohmann::json::parse(read_all(dir_ / "r.jsonl"))["timing"]["roofline"];
  ASSERT_TRUE(roof.is_object()) << roof.dump();
  EXPECT_GT(roof["attainable_gflops"].get<double>(), 0) << roof.dump();
  EXPECT_TRUE(roof["bound"] == "memory" || roof["bound"] == "compute") << roof.dump();
  const std::string cell = fmt::format("{:.3g}% ", roof["percent_of_roof"].get<double>());
  EXPECT_NE(placed.out.find(cell), std::string::npos) << cell << "\n" << placed.out;
}

// A sweep: a template over a size axis and a threads axis; one record per point, carrying it,
// and the scaling table with speed-up and efficiency.
TEST_F(CliTest, BenchSweepsAxesIntoAScalingTable) {
  cli_result r = opval({"bench", "--problems", "matmul m={n} n={n} k=16", "--axis", "n=8,16", "--axis", "threads=1,2",
                        "--budget", "0.2", "--jsonl", "s.jsonl"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 timed, 0 failed, 0 skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SPEEDUP EFFICIENCY"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n N THREADS OP +DESCRIPTOR)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n16 +2 matmul +m=16 n=16 k=16 )"))) << r.out;
  std::istringstream lines(read_all(dir_ / "s.jsonl"));
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0]["sweep"], (nlohmann::json{{"n", "8"}, {"threads", "1"}}));
  EXPECT_EQ(records[3]["sweep"], (nlohmann::json{{"n", "16"}, {"threads", "2"}}));
  EXPECT_EQ(records[3]["descriptor"], "matmul m=16 n=16 k=16 dt=f32:f32:f32");
  EXPECT_EQ(records[1]["timing"]["threads"], 2);
  EXPECT_EQ(records[0]["timing"]["threads"], 1);
}

// `opval bench compare` on two files: exit 1 when a case is slower (CI gating), 0 when none
// is, 2 for a file that is not a bench record.
TEST_F(CliTest, BenchCompareGatesOnSlowerCases) {
  auto write = [&](const std::string& name, double median) {
    std::ofstream out(dir_ / name);
    nlohmann::json values = nlohmann::json::array();
    for (int i = 0; i < 60; ++i) values.push_back(median * (1 + 0.001 * (i % 7)));
    out << nlohmann::json{{"schema", "opval-bench"}, {"descriptor", "relu shape=8 dt=f32:f32:f32"}, {"backend", "sim"},
                          {"seed", 1}, {"state", "PASSED"}, {"timed", true}, {"timing", {{"values", values}}}}
               .dump()
        << "\n";
  };
  write("base.jsonl", 10e-6);
  write("same.jsonl", 10e-6);
  write("slower.jsonl", 13e-6);
  cli_result same = opval({"bench", "compare", "base.jsonl", "same.jsonl"});
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_EQ(last_line(same.out), "0 slower, 0 faster, 1 same, 0 too noisy to tell, 0 not compared") << same.out;
  cli_result slower = opval({"bench", "compare", "base.jsonl", "slower.jsonl", "--threshold", "10"});
  EXPECT_EQ(slower.code, 1) << slower.out << slower.err;
  EXPECT_NE(slower.out.find("1.300 ["), std::string::npos) << slower.out;
  EXPECT_EQ(last_line(slower.out), "1 slower, 0 faster, 0 same, 0 too noisy to tell, 0 not compared") << slower.out;
  std::ofstream(dir_ / "run.jsonl") << "{\"descriptor\":\"relu shape=8\"}\n";
  expect_bad_input({"bench", "compare", "base.jsonl", "run.jsonl"}, "run.jsonl:1");
  expect_bad_input({"bench", "compare", "base.jsonl"}, "new");
}

// Nothing lost on output: an output naming an input of the run, an empty path, a write that
// fails (a full disk) are each one error line and exit 2, never a silent loss.
TEST_F(CliTest, OutputsNeverOverwriteInputsNorLoseRecords) {
  REQUIRE_OP(op);
  const std::string problem = op->suite("smoke").front();
  std::ofstream(dir_ / "p.txt") << problem << '\n';
  std::ofstream(dir_ / "known.txt") << "[sim]\n";
  expect_bad_input({"run", "--problems", "p.txt", "--jsonl", "p.txt"}, "'p.txt' is also an input of this run");
  expect_bad_input({"run", "--problems", "p.txt", "--jsonl", "./p.txt"}, "is also an input of this run");
  expect_bad_input({"run", "--problems", "p.txt", "--known-failures", "known.txt", "--jsonl", "known.txt"},
                   "is also an input of this run");
  expect_bad_input({"bench", "--problems", "p.txt", "--budget", "0.1", "--csv", "p.txt"}, "CSV file 'p.txt' is also");
  EXPECT_EQ(read_all(dir_ / "p.txt"), problem + "\n") << "the problems file is untouched";
  expect_bad_input({"run", "--problems", "p.txt", "--jsonl", ""}, "--jsonl: an empty path");
  expect_bad_input({"run", "--problems", ""}, "--problems: an empty path");
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const cli_result full = opval({"run", "--problems", "p.txt", "--jsonl", "/dev/full"});
  EXPECT_EQ(full.code, 2) << full.out << full.err;
  ASSERT_EQ(full.err_lines().size(), 1u) << full.err;
  EXPECT_EQ(full.err, "opval: error: writing JSONL file '/dev/full' failed (No space left on device): 0 of 1 records "
                      "reached it\n");
  EXPECT_TRUE(std::regex_search(full.out, closing_line)) << "the run itself is reported: " << full.out;
}

TEST_F(CliTest, UnknownBackendInAListIsBadInput) {
  expect_bad_input({"run", "--backend", "sim,no_such_backend", "--problems", "matmul m=2 n=2 k=2"},
                   "no_such_backend");
}

TEST_F(CliTest, HelpDocumentsEveryOptionThatDocsCliMdDocuments) {
  std::string docs = read_all(fs::path(OPVAL_SOURCE_DIR) / "docs/CLI.md");
  ASSERT_FALSE(docs.empty()) << "docs/CLI.md is missing";
  const std::regex option(R"((^|\s)(--[a-z][a-z-]*))");
  for (const std::string cmd : {"list", "run", "repro", "bench", "bench compare", "graph info", "graph reference", "report"}) {
    std::vector<std::string> args;
    for (std::size_t from = 0, to; from <= cmd.size(); from = to + 1) {
      to = std::min(cmd.find(' ', from), cmd.size());
      args.push_back(cmd.substr(from, to - from));
    }
    args.push_back("--help");
    cli_result r = opval(args);
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(docs.find(std::string("opval ") + cmd), std::string::npos) << cmd;
    for (std::sregex_iterator it(r.out.begin(), r.out.end(), option), end; it != end; ++it)
      EXPECT_NE(docs.find((*it)[2].str()), std::string::npos)
          << "opval " << cmd << " " << (*it)[2] << " is not in docs/CLI.md";
  }
  cli_result version = opval({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_TRUE(version.out.starts_with("opval ")) << version.out;
}

// --verify: the console says how many cases were verified by sample, the repro carries the
// option, and a word not among its choices is bad input.
TEST_F(CliTest, verify_sampled_is_counted_in_the_summary_and_a_bad_method_is_refused) {
  const cli_result r = opval({"run", "--problems", "matmul m=200 n=150 k=32 dt=f32:f32:f32", "--verify", "sampled"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 case verified by a sample of elements and checksums"), std::string::npos) << r.out;
  const cli_result full = opval({"run", "--problems", "matmul m=200 n=150 k=32 dt=f32:f32:f32", "--verify", "full"});
  EXPECT_EQ(full.out.find("verified by a sample"), std::string::npos) << full.out;
  expect_bad_input({"run", "--op", "relu", "--verify", "quick"}, "--verify");
}

}  // namespace
}  // namespace opval
