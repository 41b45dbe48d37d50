// Bad input at every entry point of the opval command: each flag given a bad value, batch,
// JSONL and known-failures files that are missing, directories, binary or runaway, plugins
// that are no plugins. Each must end in exactly one line `opval: error: ...` naming the
// culprit and exit code 2: no crash, no hang, no stack trace, no run over wrong input.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_testing.hpp"

#ifndef OPVAL_CLI_PATH
#error "tests/cpp/CMakeLists.txt must define OPVAL_CLI_PATH for test_bad_input"
#endif

namespace opval {
namespace {

namespace fs = std::filesystem;

/// One bad invocation: the arguments and the text the error line must contain.
struct bad_case {
  std::string name;
  std::vector<std::string> args;
  std::string culprit;
};

/// GoogleTest shows a failing case by its name.
void PrintTo(const bad_case& c, std::ostream* os) { *os << c.name; }

const std::string ok_problem = "matmul m=2 n=3 k=2";

/// `opval run` of a valid problem with `extra` arguments appended.
std::vector<std::string> run_with(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", "--problems", ok_problem};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::vector<bad_case>& bad_cases() {
  static const std::vector<bad_case> cases = {
      // command and names
      {"unknown_command", {"runn"}, "runn"},
      {"unknown_flag", run_with({"--bogus"}), "--bogus"},
      {"misspelt_flag_suggests_the_option", {"run", "--problem", ok_problem}, "(did you mean --problems?)"},
      {"misspelt_flag_of_bench", {"bench", "--budgt", "1", "--problems", ok_problem}, "(did you mean --budget?)"},
      {"timeout_zero", run_with({"--timeout", "0"}), "expects a number above 0, got '0'"},
      {"timeout_negative", run_with({"--timeout", "-5"}), "expects a number above 0, got '-5'"},
      {"timeout_without_a_worker", run_with({"--timeout", "5", "--isolation", "none"}), "--isolation none"},
      {"timeout_without_a_worker_repro", {"repro", ok_problem, "--isolation", "none", "--timeout", "1"}, "--timeout"},
      {"unknown_list", {"list", "nope"}, "nope"},
      {"unknown_op", {"run", "--op", "nope"}, "nope"},
      {"unknown_tag", {"run", "--tag", "nope"}, "nope"},
      {"unknown_contract", run_with({"--contract", "zz"}), "zz"},
      {"unknown_backend", run_with({"--backend", "nope"}), "nope"},
      // numbers
      {"seed_negative", run_with({"--seed", "-1"}), "-1"},
      {"seed_overflow", run_with({"--seed", "18446744073709551616"}), "18446744073709551616"},
      {"seed_text", run_with({"--seed", "abc"}), "abc"},
      {"seed_fraction", run_with({"--seed", "1.5"}), "1.5"},
      {"worst_above_range", run_with({"--worst", "1001"}), "1001"},
      {"worst_negative", run_with({"--worst", "-1"}), "-1"},
      {"worst_text", run_with({"--worst", "x"}), "--worst"},
      {"threads_text", run_with({"--threads", "garbage"}), "--threads"},
      {"timeout_text", run_with({"--timeout", "garbage"}), "--timeout"},
      {"leak_check_negative", run_with({"--leak-check", "-1"}), "--leak-check"},
      {"under_unknown", run_with({"--under", "helgrind"}), "helgrind"},
#if defined(__SANITIZE_ADDRESS__)
      // this test binary and the opval it runs are the ASan build, which valgrind cannot run
      {"under_valgrind_of_an_asan_build", run_with({"--under", "valgrind"}), "ASan build"},
#endif
      // policies
      {"policy_unknown", run_with({"--policy", "foo"}), "foo"},
      {"policy_empty", run_with({"--policy", ""}), "policy"},
      {"policy_bad_number", run_with({"--policy", "fixed:rtol=abc"}), "abc"},
      {"policy_out_of_range", run_with({"--policy", "bound:false_alarm=2"}), "false_alarm"},
      // descriptors
      {"descriptor_bad_attribute", {"run", "--problems", "matmul q=1"}, "q"},
      {"descriptor_negative", {"run", "--problems", "matmul m=-1"}, "-1"},
      {"descriptor_overflow", {"run", "--problems", "matmul m=99999999999999999999"}, "99999999999999999999"},
      {"descriptor_empty", {"repro", ""}, "empty"},
      {"descriptor_unknown_op", {"repro", "matmull m=1"}, "matmull"},
      // --problems files
      {"problems_missing", {"run", "--problems", "missing.txt"}, "missing.txt"},
      {"problems_directory", {"run", "--problems", "a_dir"}, "a_dir"},
      {"problems_binary", {"run", "--problems", "binary.txt"}, "binary.txt"},
      {"problems_huge_line", {"run", "--problems", "huge_line.txt"}, "huge_line.txt"},
      {"problems_empty", {"run", "--problems", "empty.txt"}, "empty.txt"},
      {"problems_bad_line", {"run", "--problems", "bad_line.txt"}, "bad_line.txt:2"},
      {"problems_missing_include", {"run", "--problems", "bad_include.txt"}, "bad_include.txt:1"},
      // --jsonl
      {"jsonl_directory", run_with({"--jsonl", "a_dir"}), "a_dir"},
      {"jsonl_under_a_file", run_with({"--jsonl", "empty.txt/out.jsonl"}), "empty.txt/out.jsonl"},
      // --plugin
      {"plugin_missing", run_with({"--plugin", "missing.so"}), "missing.so"},
      {"plugin_text_file", run_with({"--plugin", "text.so"}), "text.so"},
      {"plugin_directory", run_with({"--plugin", "a_dir"}), "a_dir"},
      {"plugin_executable", run_with({"--plugin", "/bin/sh"}), "/bin/sh"},
      // --known-failures
      {"known_failures_missing", run_with({"--known-failures", "missing.txt"}), "missing.txt"},
      {"known_failures_directory", run_with({"--known-failures", "a_dir"}), "a_dir"},
      {"known_failures_binary", run_with({"--known-failures", "binary.txt"}), "binary.txt"},
      {"known_failures_no_section", run_with({"--known-failures", "bad_line.txt"}), "bad_line.txt:1"},
      {"known_failures_unknown_section", run_with({"--known-failures", "unknown_section.txt"}),
       "unknown_section.txt:2: unknown backend 'onednnn'"},
      // --reference
      {"reference_unknown", run_with({"--reference", "nope"}), "nope"},
      {"reference_text_file", run_with({"--reference", "text.so"}), "text.so"},
      // bench
      {"bench_unknown_cache", {"bench", "--problems", ok_problem, "--cache", "lukewarm"}, "lukewarm"},
      {"bench_target_ci_zero", {"bench", "--problems", ok_problem, "--target-ci", "0"}, "--target-ci"},
      {"bench_budget_text", {"bench", "--problems", ok_problem, "--budget", "soon"}, "--budget"},
      {"bench_min_samples_one", {"bench", "--problems", ok_problem, "--min-samples", "1"}, "--min-samples"},
      {"bench_csv_directory", {"bench", "--problems", ok_problem, "--csv", "a_dir"}, "a_dir"},
      {"bench_machine_file_directory", {"bench", "--machine", "--machine-file", "a_dir"}, "a_dir"},
      {"bench_stream_mib_zero", {"bench", "--machine", "--stream-mib", "0"}, "--stream-mib"},
      {"bench_axis_malformed", {"bench", "--problems", "matmul m={n}", "--axis", "n"}, "--axis"},
      {"bench_axis_unused", {"bench", "--problems", ok_problem, "--axis", "n=1,2"}, "{n}"},
      {"bench_axis_threads_zero", {"bench", "--problems", ok_problem, "--axis", "threads=0,1"}, "threads"},
      {"bench_zip_unknown", {"bench", "--problems", "matmul m={n}", "--axis", "n=1,2", "--zip", "n,q"}, "'q'"},
      {"bench_template_no_axis", {"bench", "--problems", "matmul m={n} n={q}", "--axis", "n=1,2"}, "{q}"},
      {"bench_min_time_negative", {"bench", "--problems", ok_problem, "--min-time", "-1"}, "--min-time"},
      {"bench_unknown_op", {"bench", "--op", "nope"}, "nope"},
      {"bench_affinity_reversed", {"bench", "--problems", ok_problem, "--affinity", "5-2"}, "5-2"},
      {"bench_affinity_text", {"bench", "--problems", ok_problem, "--affinity", "all"}, "all"},
      {"bench_omp_threads_zero", {"bench", "--problems", ok_problem, "--omp-threads", "0"}, "--omp-threads"},
      // graph
      {"graph_model_missing", {"graph", "info", "no_such_model.onnx"}, "no_such_model.onnx"},
      {"graph_model_directory", {"graph", "info", "a_dir"}, "a_dir"},
      {"graph_model_binary", {"graph", "info", "binary.txt"}, "binary.txt"},
      {"graph_reference_model_binary", {"graph", "reference", "binary.txt", "--inputs", "empty.txt"}, "binary.txt"},
      {"graph_unknown_subcommand", {"graph", "bogus"}, "bogus"},
  };
  return cases;
}

/// The files the cases name, in a scratch directory shared by the cases of this process.
class BadInput : public ::testing::TestWithParam<bad_case> {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("opval_test_bad_input_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "a_dir");
    write("empty.txt", "# only a comment\n\n");
    write("bad_line.txt", ok_problem + "\nmatmul m=2 n=3 k=2 bogus=1\n");
    write("bad_include.txt", "include no_such_shape_set\n");
    write("unknown_section.txt", "# a typo in the backend's name would make every entry below dead\n[onednnn]\n" +
                                     ok_problem + "\n");
    write("text.so", "this is not a shared library\n");
    std::string binary;
    for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 37 + 11) % 256);
    write("binary.txt", binary);
    write("huge_line.txt", ok_problem + "\n" + std::string(1 << 20, 'x') + "\n");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }

  static inline fs::path dir_;
};

TEST_P(BadInput, OneErrorLineNamingTheCulpritAndExitCode2) {
  const bad_case& c = GetParam();
  const testing::cli_result r = testing::run_cli(OPVAL_CLI_PATH, dir_, c.args);
  EXPECT_EQ(r.code, 2) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(r.err.starts_with("opval: error: ")) << r.err;
  EXPECT_NE(r.err.find(c.culprit), std::string::npos) << "'" << c.culprit << "' not named in: " << r.err;
  // Binary or runaway input stays one short, printable line.
  EXPECT_LT(r.err.size(), 1200u);
  for (unsigned char ch : r.err.substr(0, r.err.size() - 1)) EXPECT_GE(ch, 0x20) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInput, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<bad_case>& info) { return info.param.name; });

/// What an editor on Windows writes: a UTF-8 byte-order mark before the first line.
TEST(BadInputBaseline, AByteOrderMarkOpensAProblemsFileOrAKnownFailuresFile) {
  const testing::scratch_dir dir("opval_test_bom");
  std::ofstream(dir.path() / "bom.txt", std::ios::binary) << "\xEF\xBB\xBF" << ok_problem << "\n";
  std::ofstream(dir.path() / "known.txt", std::ios::binary) << "\xEF\xBB\xBF[sim]\n# cause\nrelu shape=1\n";
  const testing::cli_result r = testing::run_cli(
      OPVAL_CLI_PATH, dir.path(), {"run", "--problems", "bom.txt", "--known-failures", "known.txt"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 passed"), std::string::npos) << r.out;
}

/// The table is not vacuous: the same invocations without the bad part run and pass.
TEST(BadInputBaseline, TheValidInvocationRuns) {
  const fs::path dir = fs::temp_directory_path() / ("opval_test_bad_input_ok_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const testing::cli_result r = testing::run_cli(OPVAL_CLI_PATH, dir, run_with({"--seed", "18446744073709551615"}));
  fs::remove_all(dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace opval
