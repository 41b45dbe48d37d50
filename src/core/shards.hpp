#pragma once
// Sharding a run over machines or processes (docs/FLEET.md): which shard this process runs
// (`--shard I/N`, or `--shard auto` from the environment an engine sets), and which cases go to
// which shard, balanced by their estimated cost and the same in every shard's process.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "opval/problem.hpp"

namespace opval {

/// The shard a process runs: `index` of `count` (0 <= index < count), and where that was said.
struct shard_choice {
  std::int64_t index = 0;
  std::int64_t count = 1;
  std::string from;         ///< "--shard", or the environment variables read
  std::string status_file;  ///< Bazel's TEST_SHARD_STATUS_FILE, touched to say opval shards
};

/// Reads one environment variable (std::getenv by default; tests give their own).
using environment = std::function<const char*(const char*)>;

/// The environment as std::getenv sees it.
environment process_environment();

/// `--shard`'s value: "" (no sharding), "I/N", or "auto": the first of Bazel's
/// TEST_TOTAL_SHARDS/TEST_SHARD_INDEX, googletest's GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX, Slurm
/// job arrays' SLURM_ARRAY_TASK_COUNT/SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN), and a
/// Kubernetes Indexed Job's JOB_COMPLETION_INDEX with OPVAL_SHARD_COUNT. Throws opval::error
/// naming the value or the variable when it is not one of those.
std::optional<shard_choice> parse_shard(const std::string& text, const environment& env);

/// Touches the status file Bazel asks a sharding test to create (when one is named).
void acknowledge_sharding(const shard_choice& s);

/// What a case is expected to cost, in arbitrary units: its floating-point work and bytes
/// (op_spec::counts), plus a fixed part for filling, judging and starting it.
double estimated_case_cost(const problem& p);

/// The shard of each case: the most costly first, each to the least loaded shard so far
/// (ties to the lower index), so the shards' totals differ by at most one case's cost.
/// Depends only on the costs and their order: every shard's process computes the same.
std::vector<std::int64_t> assign_shards(std::span<const double> costs, std::int64_t count);

}  // namespace opval
