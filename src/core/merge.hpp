#pragma once
// Joining a sharded run's journals into the whole run's records (`opval merge`, docs/FLEET.md):
// every shard once and finished, the records in the order the unsharded run writes them.
#include <string>
#include <vector>

#include "opval/runner.hpp"

namespace opval {

/// The whole run, from its shards' journals.
struct merged_run {
  std::vector<std::string> coverage;  ///< a generated suite's coverage lines, once
  std::vector<case_result> records;   ///< in the whole run's order, their shard positions taken off
  std::int64_t shards = 0;            ///< N
  /// The largest of the shards' summed case times (their `timings.total`): the run's wall time
  /// had each shard its own machine, less each process's start and selection.
  double slowest_shard_seconds = 0;
};

/// Merges the journals of `opval run --shard I/N --jsonl ...`, in any order; an empty journal
/// (a shard with no case) adds nothing. Throws opval::error naming the journal and the shard
/// when a journal is not a sharded run's, is unfinished (a last line cut short, or fewer
/// records than its shard's cases), when two journals hold the same shard or shards of
/// different runs, and when a shard is missing.
merged_run merge_journals(const std::vector<std::string>& journals);

}  // namespace opval
