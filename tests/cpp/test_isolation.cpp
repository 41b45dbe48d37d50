// Process isolation and the journal (core/isolation.hpp, core/journal.hpp, docs/SAFETY.md):
// a case_result survives its JSON round trip; the misbehaving plugins that segfault, abort,
// exit(0) or hang get CRASH / TIMEOUT with the signal, the descriptor and the repro command
// while every other case of the run keeps its normal verdict in the journal; a runner
// SIGKILLed mid-run and resumed leaves the same records as an uninterrupted run.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_testing.hpp"
#include "core/shell_quote.hpp"
#include "core/worker_protocol.hpp"
#include "opval/error.hpp"
#include "core/isolation.hpp"
#include "opval/policy.hpp"
#include "core/journal.hpp"
#include "opval/reporter.hpp"
#include "opval/runner.hpp"

#if !defined(OPVAL_CLI_PATH) || !defined(OPVAL_MISBEHAVING_GEMM_SEGFAULT)
#error "tests/cpp/CMakeLists.txt must define the CLI and plugin paths for test_isolation"
#endif

extern char** environ;

namespace opval {
namespace {

namespace fs = std::filesystem;
using testing::cli_result;
using testing::run_cli;

// ------------------------------------------------------------ the worker's request

// A reference made in Python has no way to be made again in the worker: an error, never a
// case silently judged against opval's own reference instead.
TEST(WorkerProtocol, AReferenceWithoutAWayToMakeItIsRefused) {
  opval::run_options o;
  o.reference = opval::alternative_reference{opval::make_backend("sim"), {}, true};
  const opval::located_problem lp{opval::parse_problem("relu shape=7"), "here:3"};
  try {
    opval::detail::request_line(lp, {"sim", ""}, o);
    FAIL() << "expected an error";
  } catch (const opval::error& e) {
    EXPECT_NE(std::string(e.what()).find("sim (float64)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot run in a worker process"), std::string::npos) << e.what();
  }
}

TEST(WorkerProtocol, EachRequestKindIsReadBackAsItself) {
  namespace d = opval::detail;
  const auto described = d::parse_worker_request(d::describe_line({"sim", "/p/a b.so"}));
  ASSERT_TRUE(std::holds_alternative<d::describe_request>(described));
  EXPECT_EQ(std::get<d::describe_request>(described).ref.plugin_path, "/p/a b.so");

  const opval::problem p = opval::parse_problem("relu shape=7");
  const auto judged = d::parse_worker_request(d::judge_request_line(p, {"in.npz"}, {"out.npz"}, {}));
  ASSERT_TRUE(std::holds_alternative<d::judge_request>(judged));
  EXPECT_EQ(std::get<d::judge_request>(judged).prob.to_string(), p.to_string());
  EXPECT_EQ(std::get<d::judge_request>(judged).outputs, std::vector<std::string>{"out.npz"});

  const auto catalog = d::parse_worker_request(d::catalog_request_line({{"blis", "crashed"}}));
  ASSERT_TRUE(std::holds_alternative<d::catalog_request>(catalog));
  EXPECT_EQ(std::get<d::catalog_request>(catalog).skip.at("blis"), "crashed");

  const auto one_case = d::parse_worker_request(d::request_line({p, "here"}, {"sim", ""}, {}));
  EXPECT_TRUE(std::holds_alternative<d::case_request>(one_case));
}

TEST(WorkerProtocol, AMalformedRequestIsOneError) {
  for (const char* line : {"not json", "5", R"({"describe": {"backend": "sim"}})", R"({"descriptor": "relu shape=3"})"}) {
    try {
      opval::detail::parse_worker_request(line);
      ADD_FAILURE() << "accepted: " << line;
    } catch (const opval::error& e) {
      EXPECT_NE(std::string(e.what()).find("malformed worker request"), std::string::npos) << e.what();
    }
  }
}

TEST(WorkerProtocol, EveryRunOptionReachesTheWorker) {
  opval::run_options o;  // every field away from its default
  o.backend = "onednn";
  o.pol = opval::parse_policy("fixed:rtol=0.01,atol=0.001");
  o.pol.false_alarm = 1e-3;
  o.pol.random_data = false;
  o.seed = 77;
  o.worst_k = 9;
  o.perturb_check = false;
  o.leak_check = 4;
  o.guard = false;
  o.guard_at = opval::guard_side::before;
  o.poison_check = false;
  o.input_check = false;
  o.threads = {1, 2};
  o.reference = opval::alternative_reference{nullptr, {"", "/some/plugin.so"}, true};
  const opval::located_problem lp{opval::parse_problem("relu shape=7"), "here:3"};
  const auto req = std::get<opval::detail::case_request>(
      opval::detail::parse_worker_request(opval::detail::request_line(lp, {"onednn", ""}, o)));
  const opval::run_options& g = req.opts;
  EXPECT_EQ(g.backend, o.backend);
  EXPECT_EQ(g.pol.to_string(), o.pol.to_string());
  EXPECT_EQ(g.pol.false_alarm, o.pol.false_alarm);
  EXPECT_EQ(g.pol.random_data, o.pol.random_data);
  EXPECT_EQ(g.seed, o.seed);
  EXPECT_EQ(g.worst_k, o.worst_k);
  EXPECT_EQ(g.perturb_check, o.perturb_check);
  EXPECT_EQ(g.leak_check, o.leak_check);
  EXPECT_EQ(g.guard, o.guard);
  EXPECT_EQ(g.guard_at, o.guard_at);
  EXPECT_EQ(g.poison_check, o.poison_check);
  EXPECT_EQ(g.input_check, o.input_check);
  EXPECT_EQ(g.threads, o.threads);
  ASSERT_TRUE(g.reference.has_value());
  EXPECT_EQ(g.reference->ref.plugin_path, "/some/plugin.so");
  EXPECT_EQ(g.reference->ref.name, "");
  EXPECT_TRUE(g.reference->float64);
  EXPECT_EQ(g.reference->impl, nullptr) << "the worker makes the reference itself";
  EXPECT_EQ(req.lp.source, "here:3");
  EXPECT_EQ(req.lp.prob.to_string(), lp.prob.to_string());
}

// ------------------------------------------------------------ JSON round trip

void expect_round_trip(const case_result& r) {
  const std::string line = to_json_line(r);
  EXPECT_EQ(to_json_line(from_json_line(line)), line);
}

TEST(ResultJson, RoundTripOfRealResultsIsExact) {
  auto sim = make_sim_backend();
  for (const char* d : {"matmul m=4 n=5 k=3", "matmul m=3 n=2 k=7 dt=bf16:f32:bf16", "softmax shape=3x9"}) {
    SCOPED_TRACE(d);
    case_result r = run_case(parse_problem(d), *sim, run_options{});
    ASSERT_FALSE(r.v.outputs.empty());
    expect_round_trip(r);
    EXPECT_EQ(to_json_line(r).find("\"reference_note\""), std::string::npos) << "no alternative reference, no field";
    run_options against_sim;
    against_sim.reference = alternative_reference{make_sim_backend(), {"sim", ""}, false};
    case_result judged = run_case(parse_problem(d), *sim, against_sim);
    ASSERT_FALSE(judged.reference_note.empty());
    expect_round_trip(judged);
    EXPECT_EQ(from_json_line(to_json_line(judged)).reference_note, judged.reference_note);
  }
}

TEST(ResultJson, RoundTripKeepsSpecialValuesAndEveryState) {
  auto sim = make_sim_backend();
  case_result r = run_case(parse_problem("matmul m=2 n=2 k=2"), *sim, run_options{});
  ASSERT_FALSE(r.v.outputs.empty());
  metrics& m = r.v.outputs[0].m;
  m.max_abs_error = std::numeric_limits<double>::quiet_NaN();
  m.max_ulps = std::numeric_limits<double>::infinity();
  m.mean_signed_error = -std::numeric_limits<double>::infinity();
  m.worst.push_back({{1, 0}, 0.1, std::nan(""), 1e-300, 5e-324, 1.0 / 3});
  r.times.device_kernel = 1.5e-6;
  r.exec = {"ref:any", "f32@tf32:f32:f32"};
  r.observed_contract = "bf16:f32:bf16";
  r.observed_note = "a \"quoted\" note\twith a tab";
  r.memory.run.kernel_rss_delta = 4096;
  r.memory.leak = {.runs = 3, .growth = {64, 64, 80}, .growth_blocks = {1, 1, 1}, .leaks = true,
                   .bytes_per_call = 64, .finding = "leaks 64 bytes per call"};
  for (state s : {state::passed, state::failed, state::mistrusted, state::skipped, state::unimplemented,
                  state::crash, state::timeout}) {
    r.v.st = s;
    expect_round_trip(r);
  }
  const case_result back = from_json_line(to_json_line(r));
  EXPECT_TRUE(std::isnan(back.v.outputs[0].m.max_abs_error));
  EXPECT_EQ(back.v.outputs[0].m.max_ulps, std::numeric_limits<double>::infinity());
  EXPECT_EQ(back.v.st, state::timeout);
  EXPECT_EQ(back.memory.run.kernel_rss_delta, 4096);
  EXPECT_EQ(back.memory.leak.growth, (std::vector<std::int64_t>{64, 64, 80}));
  EXPECT_EQ(back.memory.leak.finding, "leaks 64 bytes per call");
  EXPECT_EQ(back.times.device_kernel, 1.5e-6);
}

TEST(ResultJson, MalformedRecordsAreErrorsNamingWhatIsWrong) {
  EXPECT_THROW(from_json_line("{\"schema_version\": 1"), error);
  EXPECT_THROW(from_json_line("[1, 2]"), error);
  const std::string good = to_json_line(run_case(parse_problem("relu shape=4"), *make_sim_backend(), run_options{}));
  nlohmann::json j = nlohmann::json::parse(good);
  j.erase("descriptor");
  try {
    from_json_line(j.dump());
    ADD_FAILURE() << "a record without descriptor was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("descriptor"), std::string::npos) << e.what();
  }
  j = nlohmann::json::parse(good);
  j["state"] = "EXPLODED";
  EXPECT_THROW(from_json_line(j.dump()), error);
}

// ------------------------------------------------------------ the CLI with misbehaving plugins

/// A scratch directory per test.
class IsolationCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("opval_isolation_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::vector<nlohmann::json> journal_records(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

/// The problems of the misbehaviour runs: the plugin misbehaves only on m >= 2 and n >= 2 (the
/// second), runs the others correctly, and declines relu.
const std::string misbehaving_case = "matmul m=4 n=5 k=3 dt=f32:f32:f32";  // canonical text
const std::vector<std::string> plugin_problems = {"matmul m=1 n=5 k=3", misbehaving_case, "matmul m=3 n=1 k=2",
                                                  "relu shape=8"};

std::vector<std::string> plugin_run_args(const std::string& plugin, const fs::path& journal,
                                         std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"run", "--backend", "sim", "--plugin", plugin, "--jsonl", journal.string()};
  for (const std::string& p : plugin_problems) args.insert(args.end(), {"--problems", p});
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/// Runs the problems with sim and `plugin`; checks that the misbehaving case of the plugin is
/// `expected_state` with every fragment of `expected` in its reason, that its record and the
/// console give the repro command, and that every other case has its normal verdict.
void expect_only_the_misbehaving_case_lost(const fs::path& dir, const std::string& plugin,
                                           const std::string& expected_state,
                                           const std::vector<std::string>& expected,
                                           std::vector<std::string> more = {}) {
  const fs::path journal = dir / "run.jsonl";
  const cli_result res = run_cli(OPVAL_CLI_PATH, dir, plugin_run_args(plugin, journal, more));
  EXPECT_EQ(res.code, 1) << res.out << res.err;
  const std::vector<nlohmann::json> records = journal_records(journal);
  ASSERT_EQ(records.size(), 2 * plugin_problems.size()) << res.out;
  for (const nlohmann::json& r : records) {
    const std::string descriptor = r["descriptor"], backend = r["backend"], st = r["state"];
    SCOPED_TRACE(backend + " " + descriptor);
    if (backend == "sim") {
      EXPECT_EQ(st, "PASSED") << r["reason"];
    } else if (descriptor.starts_with("relu")) {
      EXPECT_EQ(st, "UNIMPLEMENTED");
    } else if (descriptor == misbehaving_case) {
      EXPECT_EQ(st, expected_state);
      const std::string reason = r["reason"];
      for (const std::string& fragment : expected) EXPECT_NE(reason.find(fragment), std::string::npos) << reason;
      EXPECT_NE(reason.find("'" + misbehaving_case + "'"), std::string::npos) << reason;
      const std::string repro = r["repro"];
      EXPECT_NE(repro.find("opval repro '" + misbehaving_case), std::string::npos) << repro;
      EXPECT_NE(repro.find("--plugin '" + plugin + "'"), std::string::npos) << repro;
      EXPECT_NE(res.out.find("  repro: " + repro), std::string::npos) << res.out;
    } else {
      EXPECT_EQ(st, "PASSED") << r["reason"];
    }
  }
  EXPECT_NE(res.out.find(expected_state), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("6 passed, 1 failed, 1 skipped"), std::string::npos) << res.out;
}

TEST_F(IsolationCli, SegfaultIsACrashNamingTheSignalAndTheNullPointer) {
  expect_only_the_misbehaving_case_lost(dir_, OPVAL_MISBEHAVING_GEMM_SEGFAULT, "CRASH",
                                        {"worker killed by SIGSEGV", "at address 0x0 (a null pointer)"});
}

TEST_F(IsolationCli, WriteIntoTheGuardPageIsACrashNamingTheTensor) {
  // n = 4: the 64-byte output ends on its guard page, so the write one past it traps (other
  // sizes leave slack, where the canaries catch it: a FAILED case, tested with the guards).
  const cli_result res = run_cli(OPVAL_CLI_PATH, dir_,
                                 {"run", "--plugin", OPVAL_MISBEHAVING_GEMM_OOB_WRITE, "--problems",
                                  "matmul m=4 n=4 k=3", "--problems", "matmul m=1 n=4 k=3"});
  EXPECT_EQ(res.code, 1) << res.out << res.err;
  EXPECT_NE(res.out.find("CRASH: worker killed by SIGSEGV (Segmentation fault); guard page after tensor 'dst' hit"
                         " at byte 0 past its end"),
            std::string::npos)
      << res.out;
  EXPECT_NE(res.out.find("1 passed, 1 failed, 0 skipped"), std::string::npos) << res.out;
}

TEST_F(IsolationCli, AbortIsACrashNamingSigabrt) {
  expect_only_the_misbehaving_case_lost(dir_, OPVAL_MISBEHAVING_GEMM_ABORT, "CRASH", {"worker killed by SIGABRT"});
}

TEST_F(IsolationCli, ExitZeroDuringACaseIsACrash) {
  expect_only_the_misbehaving_case_lost(dir_, OPVAL_MISBEHAVING_GEMM_EXIT0, "CRASH",
                                        {"worker exited with status 0 during the case"});
}

TEST_F(IsolationCli, HangIsATimeout) {
  expect_only_the_misbehaving_case_lost(dir_, OPVAL_MISBEHAVING_GEMM_HANG, "TIMEOUT",
                                        {"no result within the time limit", "SIGKILL"}, {"--timeout", "1"});
}

// ------------------------------------------------------------ --under valgrind

/// Why the --under valgrind tests cannot run here ("" when they can).
std::string valgrind_unavailable() {
#if defined(__SANITIZE_ADDRESS__)
  return "an ASan build: valgrind cannot run it (opval says so: test_bad_input)";
#else
  if (std::system("valgrind --version > /dev/null 2>&1") != 0) return "valgrind is not installed (scripts/setup installs it)";
  return "";
#endif
}

TEST_F(IsolationCli, UnderValgrindAHeapOverflowInsideThePluginFailsItsCaseOnly) {
  if (const std::string why = valgrind_unavailable(); !why.empty()) GTEST_SKIP() << why;
  // The plugin's result is right and its tensors untouched: only memcheck sees the write past
  // its own scratch buffer, in the worker process (--trace-children), during the m=4 case.
  const cli_result res = run_cli(OPVAL_CLI_PATH, dir_,
                                 {"run", "--under", "valgrind", "--plugin", OPVAL_MISBEHAVING_GEMM_SCRATCH_OVERFLOW,
                                  "--problems", "matmul m=1 n=5 k=3", "--problems", "matmul m=4 n=5 k=3"});
  EXPECT_EQ(res.code, 1) << res.out << res.err;
  EXPECT_NE(res.out.find("FAILED: valgrind memcheck reported"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("--under valgrind\n"), std::string::npos) << "the repro reruns under valgrind: " << res.out;
  EXPECT_NE(res.out.find("1 passed, 1 failed, 0 skipped"), std::string::npos) << res.out;
  EXPECT_NE(res.err.find("Invalid write of size 4"), std::string::npos) << res.err;
  EXPECT_NE(res.err.find("opval_plugin_execute"), std::string::npos) << res.err;
}

TEST_F(IsolationCli, UnderValgrindACorrectPluginPassesWithoutReports) {
  if (const std::string why = valgrind_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const cli_result res = run_cli(OPVAL_CLI_PATH, dir_,
                                 {"run", "--under", "valgrind", "--plugin", OPVAL_MISBEHAVING_GEMM_NONE, "--problems",
                                  "matmul m=1 n=5 k=3", "--problems", "matmul m=4 n=5 k=3"});
  EXPECT_EQ(res.code, 0) << res.out << res.err;
  EXPECT_NE(res.out.find("2 passed, 0 failed, 0 skipped"), std::string::npos) << res.out;
  EXPECT_EQ(res.err.find("=="), std::string::npos) << "no valgrind report: " << res.err;
}

/// A record without the fields that differ between two runs of the same cases: the timings,
/// and the memory figures, which depend on the state of the worker process the case ran in
/// (a fresh worker's first case pays its runtimes' one-time allocations) and on the host.
std::string without_run_dependent_fields(const std::string& line) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
  j.erase("timings");
  j.erase("memory");
  return j.dump();
}

std::vector<std::string> comparable_records(const fs::path& journal) {
  std::vector<std::string> out;
  std::ifstream in(journal);
  for (std::string line; std::getline(in, line);) out.push_back(without_run_dependent_fields(line));
  return out;
}

TEST_F(IsolationCli, IsolationNoneGivesTheSameRecordsInProcess) {
  const std::string plugin = OPVAL_MISBEHAVING_GEMM_NONE;
  const cli_result isolated = run_cli(OPVAL_CLI_PATH, dir_, plugin_run_args(plugin, dir_ / "a.jsonl"));
  const cli_result inproc =
      run_cli(OPVAL_CLI_PATH, dir_, plugin_run_args(plugin, dir_ / "b.jsonl", {"--isolation", "none"}));
  EXPECT_EQ(isolated.code, 0) << isolated.out << isolated.err;
  EXPECT_EQ(inproc.code, 0) << inproc.out << inproc.err;
  EXPECT_EQ(comparable_records(dir_ / "a.jsonl"), comparable_records(dir_ / "b.jsonl"));
  EXPECT_EQ(comparable_records(dir_ / "a.jsonl").size(), 2 * plugin_problems.size());
}

// ------------------------------------------------------------ killing and resuming

std::size_t complete_lines(const fs::path& p) {
  const std::string text = testing::read_all(p);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// How a signal reaches the runner: its process alone (kill PID, a job scheduler), or its
/// whole process group, the worker included (a terminal's Ctrl-C).
enum class reach { process, group };

/// Starts opval with `args` in a process group of its own (stdout to /dev/null, stderr to
/// `err`), waits until `journal` holds `lines` complete records (no journal: a second), sends
/// it `signo` and returns its wait status; nullopt when it ended by itself first.
std::optional<int> signal_runner_at(const std::vector<std::string>& args, const fs::path& journal, std::size_t lines,
                                    int signo, reach to = reach::process, const fs::path& err = "/dev/null") {
  std::vector<std::string> argv_text = {OPVAL_CLI_PATH};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, OPVAL_CLI_PATH, &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return std::nullopt;
  int status = 0;
  // Bounded so a broken runner cannot hang the test; not a timing assertion.
  for (int polls = 0; polls < 60000; ++polls) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return std::nullopt;
    if (journal.empty() ? polls >= 1000 : fs::exists(journal) && complete_lines(journal) >= lines) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(to == reach::group ? -pid : pid, signo);
  ::waitpid(pid, &status, 0);
  return status;
}

/// Starts opval with `args`, waits until `journal` holds `lines` complete records, and
/// SIGKILLs it. Returns false when it ended by itself first.
bool kill_runner_at(const std::vector<std::string>& args, const fs::path& journal, std::size_t lines) {
  const std::optional<int> status = signal_runner_at(args, journal, lines, SIGKILL);
  return status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL;
}

TEST_F(IsolationCli, KilledAndResumedRunEqualsAnUninterruptedOne) {
  // The hanging plugin holds the runner at its first m >= 2 case for the whole --timeout:
  // the kill lands mid-run, after exactly the records before it. A problem listed twice, on
  // both sides of the kill, checks that resuming neither skips nor duplicates its second run.
  const std::vector<std::string> problems = {"matmul m=1 n=5 k=3", "relu shape=8", "matmul m=4 n=5 k=3",
                                             "matmul m=1 n=5 k=3", "matmul m=3 n=1 k=2", "relu shape=5"};
  auto args = [&](const fs::path& journal, bool resume) {
    std::vector<std::string> a = {"run", "--backend", "sim", "--plugin", OPVAL_MISBEHAVING_GEMM_HANG,
                                  "--timeout", "2", resume ? "--resume" : "--jsonl", journal.string()};
    for (const std::string& p : problems) a.insert(a.end(), {"--problems", p});
    return a;
  };
  const fs::path whole = dir_ / "whole.jsonl", resumed = dir_ / "resumed.jsonl";
  const cli_result uninterrupted = run_cli(OPVAL_CLI_PATH, dir_, args(whole, false));
  EXPECT_EQ(uninterrupted.code, 1) << uninterrupted.out << uninterrupted.err;
  ASSERT_EQ(complete_lines(whole), 2 * problems.size());

  const std::size_t before_hang = 5;  // sim and plugin of the first two problems, sim of the third
  ASSERT_TRUE(kill_runner_at(args(resumed, false), resumed, before_hang));
  ASSERT_EQ(complete_lines(resumed), before_hang);
  {
    // As if the kill had landed while a record was being written: resuming cuts it off.
    std::ofstream torn(resumed, std::ios::app);
    torn << R"({"schema_version":1,"descriptor":"matmul m=4)";
  }
  const cli_result finished = run_cli(OPVAL_CLI_PATH, dir_, args(resumed, true));
  EXPECT_EQ(finished.code, 1) << finished.out << finished.err;
  EXPECT_EQ(comparable_records(resumed), comparable_records(whole));
  EXPECT_NE(finished.err.find("5 cases taken from the journal, 7 run now"), std::string::npos) << finished.err;
  // The report covers the whole run, replayed records included.
  const std::string closing = "9 passed, 1 failed, 2 skipped";
  EXPECT_NE(uninterrupted.out.find(closing), std::string::npos) << uninterrupted.out;
  EXPECT_NE(finished.out.find(closing), std::string::npos) << finished.out;

  // Resuming a finished run runs nothing and appends nothing.
  const cli_result again = run_cli(OPVAL_CLI_PATH, dir_, args(resumed, true));
  EXPECT_NE(again.err.find("12 cases taken from the journal, 0 run now"), std::string::npos) << again.err;
  EXPECT_EQ(comparable_records(resumed), comparable_records(whole));
}

TEST_F(IsolationCli, InterruptedRunSaysHowToResumeAndKeepsNoCaseItsWorkerDiedIn) {
  // As above: the hanging plugin holds the runner at its first m >= 2 case when the signal
  // comes. Ctrl-C reaches the worker too (it dies of SIGINT: the interruption's, not a CRASH);
  // SIGTERM reaches opval alone (the case ends by its timeout, not recorded either).
  const std::vector<std::string> problems = {"matmul m=1 n=5 k=3", "relu shape=8", "matmul m=4 n=5 k=3",
                                             "relu shape=5"};
  auto args = [&](const fs::path& journal, bool resume) {
    std::vector<std::string> a = {"run", "--backend", "sim", "--plugin", OPVAL_MISBEHAVING_GEMM_HANG,
                                  "--timeout", "2", resume ? "--resume" : "--jsonl", journal.string()};
    for (const std::string& p : problems) a.insert(a.end(), {"--problems", p});
    return a;
  };
  const fs::path whole = dir_ / "whole.jsonl";
  ASSERT_EQ(run_cli(OPVAL_CLI_PATH, dir_, args(whole, false)).code, 1);
  for (const auto& [signo, to, name] : {std::tuple{SIGINT, reach::group, "SIGINT"}, {SIGTERM, reach::process, "SIGTERM"}}) {
    SCOPED_TRACE(name);
    const fs::path journal = dir_ / (std::string(name) + ".jsonl"), err = dir_ / (std::string(name) + ".err");
    const std::optional<int> status = signal_runner_at(args(journal, false), journal, 5, signo, to, err);
    ASSERT_TRUE(status.has_value());
    ASSERT_TRUE(WIFEXITED(*status)) << *status;
    EXPECT_EQ(WEXITSTATUS(*status), 128 + signo);
    const std::string said = testing::read_all(err);
    std::string resume_with = OPVAL_CLI_PATH;
    for (const std::string& a : args(journal, false)) resume_with += " " + detail::shell_word(a);
    EXPECT_NE(said.find(fmt::format("opval: interrupted by {} after 5 of 8 cases; resume with: {} --resume {}\n",
                                    name, resume_with, journal.string())),
              std::string::npos)
        << said;
    EXPECT_EQ(complete_lines(journal), 5u);
    EXPECT_EQ(testing::read_all(journal).find("CRASH"), std::string::npos);
    const cli_result finished = run_cli(OPVAL_CLI_PATH, dir_, args(journal, true));
    EXPECT_EQ(finished.code, 1) << finished.err;
    EXPECT_EQ(comparable_records(journal), comparable_records(whole));
  }
  // Without a journal there is nothing to resume from, and the message says so.
  std::vector<std::string> plain = args(dir_ / "unused.jsonl", false);
  std::erase_if(plain, [&](const std::string& a) { return a == "--jsonl" || a == (dir_ / "unused.jsonl").string(); });
  const fs::path err = dir_ / "no_journal.err";
  const std::optional<int> status = signal_runner_at(plain, {}, 0, SIGINT, reach::group, err);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 130) << *status;
  EXPECT_NE(testing::read_all(err).find("; no journal to resume from (give --jsonl FILE to be able to resume)"),
            std::string::npos)
      << testing::read_all(err);
}

TEST_F(IsolationCli, ResumeRefusesAJournalThatIsNotOne) {
  {
    std::ofstream bad(dir_ / "bad.jsonl");
    bad << "not json\n";
  }
  const cli_result res =
      run_cli(OPVAL_CLI_PATH, dir_, {"run", "--problems", "relu shape=4", "--resume", (dir_ / "bad.jsonl").string()});
  EXPECT_EQ(res.code, 2);
  EXPECT_NE(res.err.find("line 1"), std::string::npos) << res.err;
  const cli_result missing =
      run_cli(OPVAL_CLI_PATH, dir_, {"run", "--problems", "relu shape=4", "--resume", (dir_ / "none.jsonl").string()});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("none.jsonl"), std::string::npos) << missing.err;
}

// ------------------------------------------------------------ the library API

TEST(CaseWorker, ReplacesACrashedWorkerAndKeepsAHealthyOne) {
  case_worker w(isolation_options{.worker_executable = OPVAL_CLI_PATH});
  auto sim = make_sim_backend();
  const located_problem ok{parse_problem("relu shape=4"), "<test>"};
  const case_result first = w.run(ok, {"sim", ""}, *sim, run_options{});
  EXPECT_EQ(first.v.st, state::passed) << first.v.reason;
  const pid_t worker = w.pid();
  EXPECT_GT(worker, 0);
  EXPECT_EQ(w.run(ok, {"sim", ""}, *sim, run_options{}).v.st, state::passed);
  EXPECT_EQ(w.pid(), worker) << "a healthy worker is kept from case to case";

  const located_problem bad{parse_problem(misbehaving_case), "<test>"};
  const case_result crashed = w.run(bad, {"", OPVAL_MISBEHAVING_GEMM_SEGFAULT}, *sim, run_options{});
  EXPECT_EQ(crashed.v.st, state::crash);
  EXPECT_TRUE(is_failure(crashed.v.st));
  EXPECT_EQ(w.pid(), 0);
  EXPECT_EQ(w.run(ok, {"sim", ""}, *sim, run_options{}).v.st, state::passed);
  EXPECT_NE(w.pid(), worker);
}

// This test program does not handle `__worker`, as an embedder's would not: the default worker
// is opval-worker beside libopval, found by the library, and the case runs isolated there.
TEST(CaseWorker, AnEmbedderGetsTheInstalledWorkerWithoutHandlingWorkerItself) {
  ASSERT_EQ(::getenv("OPVAL_WORKER"), nullptr);
  const isolation_options defaults;
  EXPECT_TRUE(defaults.worker_executable.ends_with("/opval-worker")) << defaults.worker_executable;
  case_worker w;
  auto sim = make_sim_backend();
  const case_result r = w.run({parse_problem("relu shape=4"), "<test>"}, {"sim", ""}, *sim, run_options{});
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_GT(w.pid(), 0);
  EXPECT_NE(w.pid(), ::getpid());
  ::setenv("OPVAL_WORKER", "/bin/true", 1);  // the variable names another worker
  EXPECT_EQ(isolation_options{}.worker_executable, "/bin/true");
  ::unsetenv("OPVAL_WORKER");
  // No worker program: one clear error, never this test program run again as the worker.
  case_worker none(isolation_options{.worker_executable = ""});
  try {
    (void)none.run({parse_problem("relu shape=4"), "<test>"}, {"sim", ""}, *sim, run_options{});
    ADD_FAILURE() << "a worker started without a worker program";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("no opval-worker found"), std::string::npos) << e.what();
  }
}

TEST(CaseWorker, AWorkerDeadBeforeItReadsLeavesTheCallersSigpipeAlone) {
  // /bin/true exits at once: the request goes to a pipe whose reader is (usually) gone. The
  // write's SIGPIPE must neither kill this process nor be handled by changing its disposition.
  struct sigaction before{};
  ::sigaction(SIGPIPE, nullptr, &before);
  ASSERT_EQ(before.sa_handler, SIG_DFL);
  case_worker w(isolation_options{.worker_executable = "/bin/true"});
  auto sim = make_sim_backend();
  for (int i = 0; i < 20; ++i) {  // 20 races: some write must meet a closed pipe
    const case_result r = w.run({parse_problem("relu shape=4"), "<test>"}, {"sim", ""}, *sim, run_options{});
    EXPECT_EQ(r.v.st, state::crash) << r.v.reason;
  }
  EXPECT_THROW(w.describe({"sim", ""}), error);
  struct sigaction after{};
  ::sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(CaseWorker, TimeLimitGrowsWithTheWork) {
  isolation_options o;
  o.timeout_seconds = 5;
  EXPECT_NEAR(case_time_limit(parse_problem("relu shape=4"), o), 5, 1e-3);
  // 2 * 1024^3 flops = 2.1 GFLOP: 21 s more at the default 10 s per GFLOP.
  EXPECT_NEAR(case_time_limit(parse_problem("matmul m=1024 n=1024 k=1024"), o), 5 + 10 * 2.147483648, 1e-6);
}

}  // namespace
}  // namespace opval
