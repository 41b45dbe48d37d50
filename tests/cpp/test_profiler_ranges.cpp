// The profilers' ranges and measured region (docs/PROFILING.md), seen as a profiler sees them:
// opval runs under a stub collector (profiler_stubs/), loaded through the tool's own variable
// (NVTX_INJECTION64_PATH for NVTX, INTEL_LIBITTNOTIFY64 for ITT), which records every range.
// And perf's counters, counting only inside the measured region through perf's control fifos.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli_testing.hpp"
#include "core/profiler_ranges.hpp"
#include "timing_testing.hpp"

namespace {

using opval::testing::quote;
using opval::testing::read_all;
using opval::testing::run_cli;
using opval::testing::scratch_dir;
namespace fs = std::filesystem;

// One range as the collector saw it, with the ranges opened inside it and the collection
// controls (pause, resume) called directly inside it.
struct span {
  std::string name;
  std::vector<span> children;
  std::vector<std::string> controls;
};

// One thread's ranges, from the stub's lines "<pid> <tid> <event> <name>".
struct thread_trace {
  std::string pid;
  span root;          // its children are the thread's outermost ranges
  bool nested = true; // every end closed an open range, and none was left open
};

std::map<std::string, thread_trace> parse_trace(const std::string& text) {
  std::map<std::string, thread_trace> threads;
  std::map<std::string, std::vector<span*>> open;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string pid, tid, event, name;
    fields >> pid >> tid >> event;
    std::getline(fields >> std::ws, name);
    const std::string key = pid + "/" + tid;
    thread_trace& t = threads[key];
    t.pid = pid;
    std::vector<span*>& stack = open[key];
    span& top = stack.empty() ? t.root : *stack.back();
    if (event == "begin") {
      top.children.push_back({name, {}, {}});
      stack.push_back(&top.children.back());  // stable: only the top's children grow
    } else if (event == "end") {
      if (stack.empty()) t.nested = false;
      else stack.pop_back();
    } else if (event == "pause" || event == "resume") {
      top.controls.push_back(event);
    }
  }
  for (auto& [key, stack] : open)
    if (!stack.empty()) threads[key].nested = false;
  return threads;
}

// Every range named `name`, anywhere, with the pid of its process.
void find_all(const span& s, const std::string& name, const std::string& pid,
              std::vector<std::pair<std::string, const span*>>& out) {
  for (const span& c : s.children) {
    if (c.name == name) out.emplace_back(pid, &c);
    find_all(c, name, pid, out);
  }
}

std::vector<std::pair<std::string, const span*>> find_all(const std::map<std::string, thread_trace>& threads,
                                                          const std::string& name) {
  std::vector<std::pair<std::string, const span*>> out;
  for (const auto& [key, t] : threads) find_all(t.root, name, t.pid, out);
  return out;
}

std::vector<std::string> child_names(const span& s) {
  std::vector<std::string> names;
  for (const span& c : s.children) names.push_back(c.name);
  return names;
}

// `want` appears in `names` in this order (other names may come between).
bool in_order(const std::vector<std::string>& names, const std::vector<std::string>& want) {
  auto it = names.begin();
  for (const std::string& w : want) {
    it = std::find(it, names.end(), w);
    if (it == names.end()) return false;
    ++it;
  }
  return true;
}

std::string first_descriptor(const fs::path& jsonl) {
  std::ifstream in(jsonl);
  std::string line;
  std::getline(in, line);
  return nlohmann::json::parse(line).at("descriptor").get<std::string>();
}

// A collector to run opval under: the variables that load it.
struct collector {
  std::string name;
  std::vector<std::string> env;
};

void PrintTo(const collector& c, std::ostream* os) { *os << c.name; }

std::vector<collector> built_collectors() {
  std::vector<collector> c;
#ifdef OPVAL_NVTX_STUB
  c.push_back({"nvtx", {"NVTX_INJECTION64_PATH=" OPVAL_NVTX_STUB}});
#endif
#ifdef OPVAL_ITT_STUB
  // The stub speaks the loader's version-1 handshake, which binds the groups named here.
  c.push_back({"itt", {"INTEL_LIBITTNOTIFY64=" OPVAL_ITT_STUB, "INTEL_ITTNOTIFY_GROUPS=structure,control"}});
#endif
  return c;
}

class profiler_ranges : public ::testing::TestWithParam<collector> {
 protected:
  // Runs opval with `args` under the collector; returns the threads' ranges. The pid of the
  // opval process itself is left in opval_pid_.
  std::map<std::string, thread_trace> run_under_collector(const std::vector<std::string>& args) {
    std::string cmd = "echo $$ > " + quote((dir_.path() / "pid").string()) + " && exec env";
    for (const std::string& e : GetParam().env) cmd += " " + quote(e);
    cmd += " " + quote("OPVAL_PROFILER_STUB_LOG=" + log_.string()) + " " + quote(OPVAL_CLI_PATH);
    for (const std::string& a : args) cmd += " " + quote(a);
    const opval::testing::cli_result r = run_cli("sh", dir_.path(), {"-c", cmd});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    opval_pid_ = read_all(dir_.path() / "pid");
    opval_pid_.erase(opval_pid_.find_last_not_of('\n') + 1);
    return parse_trace(read_all(log_));
  }

  scratch_dir dir_{"opval_profiler_ranges"};
  fs::path log_ = dir_.path() / "trace.txt";
  fs::path jsonl_ = dir_.path() / "out.jsonl";
  std::string opval_pid_;
};

// The case's range, by its descriptor, and its phases in order, directly inside it.
void expect_case_and_phases(const std::map<std::string, thread_trace>& threads, const std::string& descriptor,
                            const std::string& expected_pid) {
  for (const auto& [key, t] : threads) EXPECT_TRUE(t.nested) << "ranges not nested on thread " << key;
  const auto cases = find_all(threads, descriptor);
  ASSERT_EQ(cases.size(), 1u) << "one range named after the case: " << descriptor;
  EXPECT_EQ(cases[0].first, expected_pid) << "the ranges are in the process that runs the case";
  const std::vector<std::string> phases = child_names(*cases[0].second);
  ASSERT_FALSE(phases.empty());
  EXPECT_EQ(phases.front(), "opval/fill");
  EXPECT_TRUE(in_order(phases, {"opval/fill", "opval/prepare", "opval/kernel", "opval/reference", "opval/compare"}))
      << ::testing::PrintToString(phases);
  const std::set<std::string> known{"opval/fill", "opval/prepare", "opval/kernel", "opval/reference", "opval/bound",
                                    "opval/compare"};
  for (const std::string& p : phases) EXPECT_TRUE(known.count(p)) << "unexpected range in the case: " << p;
}

TEST_P(profiler_ranges, name_each_case_and_its_phases_in_process) {
  const auto threads = run_under_collector(
      {"run", "--problems", "matmul m=8 n=8 k=8", "--backend", "sim", "--isolation", "none", "--jsonl", jsonl_.string()});
  expect_case_and_phases(threads, first_descriptor(jsonl_), opval_pid_);
}

// By default the case runs in the worker process: the ranges are there, where the kernel runs.
TEST_P(profiler_ranges, are_in_the_worker_that_runs_the_case) {
  const auto threads =
      run_under_collector({"run", "--problems", "matmul m=8 n=8 k=8", "--backend", "sim", "--jsonl", jsonl_.string()});
  const std::string descriptor = first_descriptor(jsonl_);
  const auto cases = find_all(threads, descriptor);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_NE(cases[0].first, opval_pid_) << "the case ran in a worker, not in opval itself";
  expect_case_and_phases(threads, descriptor, cases[0].first);
}

// opval bench: the check, then the timing, whose measured region "opval/timing" holds only the
// kernel's calls (no range inside it), and where alone the collection is on.
TEST_P(profiler_ranges, bench_measures_only_the_timed_kernel) {
  const auto threads = run_under_collector({"bench", "--problems", "relu shape=4096", "--backend", "sim", "--isolation",
                                            "none", "--budget", "0.5", "--min-time", "0.1", "--jsonl",
                                            jsonl_.string()});
  const std::string descriptor = first_descriptor(jsonl_);
  const auto cases = find_all(threads, descriptor);
  ASSERT_EQ(cases.size(), 2u) << "the check's case range, then the timing's";
  EXPECT_TRUE(in_order(child_names(*cases[0].second), {"opval/fill", "opval/kernel", "opval/compare"}));
  EXPECT_EQ(child_names(*cases[1].second),
            (std::vector<std::string>{"opval/fill", "opval/prepare", "opval/timing"}));
  const auto timing = find_all(threads, "opval/timing");
  ASSERT_EQ(timing.size(), 1u);
  const span& measured = *timing[0].second;
  EXPECT_TRUE(measured.children.empty()) << "nothing but the kernel inside the measured region";
  if (GetParam().name == "itt") {
    // Resumed on entry, paused on exit; in between, only pauses around the untimed steps.
    const std::vector<std::string>& c = measured.controls;
    ASSERT_GE(c.size(), 2u);
    EXPECT_EQ(c.front(), "resume");
    EXPECT_EQ(c.back(), "pause");
    for (std::size_t i = 1; i < c.size(); ++i) EXPECT_NE(c[i], c[i - 1]) << "pause and resume alternate";
    std::size_t controls = 0;
    for (const auto& [key, t] : threads) {
      controls += t.root.controls.size();
      for (const span& s : t.root.children) controls += s.controls.size();
    }
    EXPECT_EQ(controls, 0u) << "the collection is never turned on or off outside the measured region";
  }
}

INSTANTIATE_TEST_SUITE_P(stubs, profiler_ranges, ::testing::ValuesIn(built_collectors()),
                         [](const auto& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(profiler_ranges);

TEST(profiler_ranges_build, names_its_interfaces) {
  const std::string_view have = opval::detail::profiler_interfaces();
#ifdef OPVAL_NVTX_STUB
  EXPECT_NE(have.find("nvtx"), have.npos);
#endif
#ifdef OPVAL_ITT_STUB
  EXPECT_NE(have.find("itt"), have.npos);
#endif
  EXPECT_EQ(opval::detail::range_name(opval::detail::phase::timing), "opval/timing");
  if (have.find("itt") == have.npos)
    std::cout << "ITT ranges are not built here (no ittnotify client found: docs/PROFILING.md)\n";
}

// perf stat --delay=-1 --control=fifo:CTL,ACK counts nothing until opval enables it, which it
// does only around the measured region (OPVAL_PERF_CONTROL). task-clock is a software event:
// it counts on a VM without a PMU. The check before the timing is made heavy (a leak check of
// 1000 kernel runs), so that a region reaching beyond the timing would show.
class perf_control : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("perf stat -e task-clock -o /dev/null true >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "perf cannot count task-clock here";
    ASSERT_EQ(::mkfifo(ctl_.c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo(ack_.c_str(), 0600), 0);
  }
  // CPU time (task-clock) in milliseconds of `opval <command> <the case>`, under perf stat
  // with `perf_options`; -1 when perf counted nothing. One OpenMP thread: CPU time within
  // the region is then at most its wall time.
  double task_clock_ms(const std::string& command, const std::vector<std::string>& perf_options,
                       bool tell_opval = false) {
    const fs::path out = dir_.path() / "perf.csv";
    std::vector<std::string> args{"stat", "-x,", "-o", out.string(), "-e", "task-clock"};
    args.insert(args.end(), perf_options.begin(), perf_options.end());
    for (const char* a : {"--", "env", "OMP_NUM_THREADS=1"}) args.push_back(a);
    if (tell_opval) args.push_back("OPVAL_PERF_CONTROL=" + control_);
    for (const char* a : {OPVAL_CLI_PATH, command.c_str(), "--problems", "relu shape=4096", "--backend", "sim",
                          "--isolation", "none", "--leak-check", "1000", "--jsonl"})
      args.push_back(a);
    args.push_back(jsonl_.string());
    if (command == "bench")
      for (const char* a : {"--budget", "0.6", "--min-time", "0.3"}) args.push_back(a);
    fs::remove(jsonl_);
    const opval::testing::cli_result r = run_cli("perf", dir_.path(), args);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    std::istringstream in(read_all(out));
    for (std::string line; std::getline(in, line);)
      if (line.find("task-clock") != std::string::npos)
        return line.rfind("<not counted>", 0) == 0 ? -1 : std::stod(line.substr(0, line.find(',')));
    ADD_FAILURE() << "no task-clock line in perf's output:\n" << read_all(out);
    return -1;
  }
  // The measured region's wall time in the last bench record: its warm-up and sampling.
  double region_ms() {
    std::ifstream in(jsonl_);
    std::string line;
    std::getline(in, line);
    const nlohmann::json t = nlohmann::json::parse(line).at("timing");
    return 1e3 * (t.at("warmup_seconds").get<double>() + t.at("sampling_seconds").get<double>());
  }
  scratch_dir dir_{"opval_perf_control"};
  fs::path ctl_ = dir_.path() / "ctl", ack_ = dir_.path() / "ack", jsonl_ = dir_.path() / "bench.jsonl";
  std::string control_ = "fifo:" + ctl_.string() + "," + ack_.string();
};

TEST_F(perf_control, counts_only_the_measured_region) {
  const std::vector<std::string> wait_for_opval{"--delay=-1", "--control=" + control_};
  opval::testing::expect_on_some_try(3, [&]() -> std::string {
    const double measured = task_clock_ms("bench", wait_for_opval, true);
    const double region = region_ms();
    const double whole = task_clock_ms("bench", {});
    const double check = task_clock_ms("run", {});
    if (measured <= 0) return "opval did not enable the counters";
    if (measured >= 1.05 * region + 5)
      return "counted " + std::to_string(measured) + " ms, more than the region's wall time, " +
             std::to_string(region) + " ms";
    if (measured >= whole - 0.5 * check)
      return "the check (" + std::to_string(check) + " ms) is not outside the measured region: " +
             std::to_string(measured) + " of " + std::to_string(whole) + " ms";
    return "";
  });
  // Told nothing, opval never enables the counters: perf counts nothing at all.
  EXPECT_EQ(task_clock_ms("bench", wait_for_opval), -1);
}

}  // namespace
