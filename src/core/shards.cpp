// Sharding a run (core/shards.hpp).
#include "core/shards.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string_view>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval {
namespace {

// A non-negative integer, the whole text; nullopt otherwise.
std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v < 0) return std::nullopt;
  return v;
}

// I of N from two texts, checked: 0 <= I < N. `from` names where they came from.
shard_choice checked(std::string_view index, std::string_view count, std::string from, std::int64_t offset = 0) {
  const std::optional<std::int64_t> i = whole_number(index), n = whole_number(count);
  if (!i || !n || *n < 1)
    throw error(fmt::format("{}: '{}' of '{}' is not a shard: give a shard index from 0 and a count from 1", from,
                            index, count));
  if (*i < offset || *i - offset >= *n)
    throw error(fmt::format("{}: shard index {} is outside 0..{}", from, *i - offset, *n - 1));
  return {*i - offset, *n, std::move(from), ""};
}

// The engines' conventions, in the order `auto` tries them: (count variable, index variable).
struct engine_variables {
  const char* count;
  const char* index;
};
constexpr engine_variables engines[] = {{"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX"},
                                        {"GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX"},
                                        {"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_ID"},
                                        {"OPVAL_SHARD_COUNT", "JOB_COMPLETION_INDEX"}};

shard_choice from_environment(const environment& env) {
  for (const engine_variables& e : engines) {
    const char* count = env(e.count);
    const char* index = env(e.index);
    if (!count && !index) continue;
    if (!count || !index)
      throw error(fmt::format("--shard auto: {} is set but {} is not", count ? e.count : e.index,
                              count ? e.index : e.count));
    // A Slurm array's task ids run from SLURM_ARRAY_TASK_MIN (--array=1-4 starts at 1).
    std::int64_t offset = 0;
    if (std::string_view(e.index) == "SLURM_ARRAY_TASK_ID")
      if (const char* min = env("SLURM_ARRAY_TASK_MIN"); min && whole_number(min)) offset = *whole_number(min);
    shard_choice s = checked(index, count, fmt::format("--shard auto ({}, {})", e.index, e.count), offset);
    if (std::string_view(e.count) == "TEST_TOTAL_SHARDS")
      if (const char* status = env("TEST_SHARD_STATUS_FILE")) s.status_file = status;
    return s;
  }
  throw error(
      "--shard auto: no sharding environment (Bazel's TEST_TOTAL_SHARDS and TEST_SHARD_INDEX, googletest's "
      "GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX, Slurm's SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_ID, or a "
      "Kubernetes Indexed Job's JOB_COMPLETION_INDEX with OPVAL_SHARD_COUNT)");
}

}  // namespace

environment process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

std::optional<shard_choice> parse_shard(const std::string& text, const environment& env) {
  if (text.empty()) return std::nullopt;
  if (text == "auto") return from_environment(env);
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos)
    throw error(fmt::format("--shard: '{}' is neither I/N (e.g. 0/4) nor auto", text));
  return checked(std::string_view(text).substr(0, slash), std::string_view(text).substr(slash + 1), "--shard");
}

void acknowledge_sharding(const shard_choice& s) {
  if (s.status_file.empty()) return;
  std::ofstream touch(s.status_file, std::ios::app);
  if (!touch) throw error(fmt::format("cannot create Bazel's shard status file '{}'", s.status_file));
}

double estimated_case_cost(const problem& p) {
  // A case fills its inputs, runs the kernel and the fp64 reference, bounds and compares: work
  // about proportional to its flops and bytes, on top of a fixed cost that dominates small ones.
  // The weights are a least-squares fit of the regression suite's case times on sim (6406
  // cases, 2026-12-06: 0.65 ms + 1.2 ns per flop + 23 ns per byte; docs/FLEET.md), in flops.
  constexpr double fixed = 5.6e5, per_byte = 20.0;
  const op_counts c = p.spec().counts(p);
  return fixed + c.flops + per_byte * c.bytes;
}

std::vector<std::int64_t> assign_shards(std::span<const double> costs, std::int64_t count) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(static_cast<std::size_t>(count), 0.0);
  std::vector<std::int64_t> shard(costs.size(), 0);
  for (const std::size_t c : order) {
    const auto lightest = std::min_element(load.begin(), load.end());  // the first of equal loads
    shard[c] = lightest - load.begin();
    *lightest += costs[c];
  }
  return shard;
}

}  // namespace opval
