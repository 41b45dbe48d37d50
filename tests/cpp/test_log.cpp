// The diagnostics sink (opval/log.hpp): threshold, replacement, restoring the default, and the
// messages the runner and the worker emit.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "opval/backend.hpp"
#include "core/isolation.hpp"
#include "opval/log.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace {

using namespace opval;

/// Collects messages while alive; restores the default sink after.
class captured_log {
 public:
  explicit captured_log(log_level threshold) {
    set_log_sink([this](log_level level, std::string_view text) { messages.emplace_back(level, std::string(text)); },
                 threshold);
  }
  ~captured_log() { set_log_sink({}, log_level::warning); }
  bool any_containing(std::string_view needle) const {
    for (const auto& [level, text] : messages)
      if (text.find(needle) != std::string::npos) return true;
    return false;
  }
  std::vector<std::pair<log_level, std::string>> messages;
};

TEST(log, messages_below_the_threshold_are_dropped) {
  captured_log log_(log_level::info);
  EXPECT_FALSE(log_enabled(log_level::debug));
  EXPECT_TRUE(log_enabled(log_level::warning));
  log(log_level::debug, "hidden");
  log(log_level::info, "shown");
  log(log_level::error, "also shown");
  ASSERT_EQ(log_.messages.size(), 2u);
  EXPECT_EQ(log_.messages[0], std::make_pair(log_level::info, std::string("shown")));
  EXPECT_EQ(log_.messages[1].first, log_level::error);
}

TEST(log, an_empty_sink_restores_the_default_threshold) {
  { captured_log log_(log_level::debug); EXPECT_TRUE(log_enabled(log_level::debug)); }
  EXPECT_FALSE(log_enabled(log_level::info));  // default: warnings and errors only (no $OPVAL_LOG here)
  EXPECT_TRUE(log_enabled(log_level::warning));
}

TEST(log, the_runner_logs_each_case_at_debug_level) {
  captured_log log_(log_level::debug);
  auto sim = make_backend("sim");
  run_case(parse_problem("relu shape=8 dt=f32"), *sim, run_options{});
  EXPECT_TRUE(log_.any_containing("relu shape=8 dt=f32:f32:f32 on sim: PASSED"));
}

TEST(log, the_worker_logs_its_start_and_its_loss) {
  captured_log log_(log_level::debug);
  case_worker worker(isolation_options{.worker_executable = OPVAL_CLI_PATH, .timeout_seconds = 30});
  auto sim = make_backend("sim");
  const case_result r = worker.run({parse_problem("relu shape=8 dt=f32"), "test"}, {"sim", ""}, *sim, run_options{});
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_TRUE(log_.any_containing("started worker process"));
  EXPECT_FALSE(log_.any_containing("lost the worker process"));

  auto crashing = make_backend("sim");  // names the backend in the record; the worker loads the plugin
  const case_result lost = worker.run({parse_problem("matmul m=8 n=8 k=8 dt=f32"), "test"},
                                      {"", OPVAL_MISBEHAVING_GEMM_SEGFAULT}, *crashing, run_options{});
  EXPECT_EQ(lost.v.st, state::crash);
  EXPECT_TRUE(log_.any_containing("lost the worker process (CRASH)"));
}

}  // namespace
