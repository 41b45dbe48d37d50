// Joining a sharded run's journals (core/merge.hpp).
#include "core/merge.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/journal.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

// One journal's shard: which, of what run, and its records.
struct shard_journal {
  std::string path;
  shard_position first;  ///< its first record's position (index, count, cases, shard_cases)
  journal_contents contents;
};

shard_journal read_shard(const std::string& path) {
  shard_journal j{path, {}, read_journal(path)};
  const std::vector<case_result>& records = j.contents.records;
  if (j.contents.unfinished)
    throw error(fmt::format("journal '{}' ends in an unfinished line: its shard was interrupted (finish it with "
                            "opval run --resume {})",
                            path, path));
  if (records.empty()) return j;  // a shard with no case (more shards than cases), or nothing
  for (const case_result& r : records)
    if (!r.shard)
      throw error(fmt::format("journal '{}': the record of '{}' on {} has no shard: not a journal of opval run --shard",
                              path, r.descriptor, r.backend));
  j.first = *records.front().shard;
  for (const case_result& r : records) {
    const shard_position& s = *r.shard;
    if (s.index != j.first.index || s.count != j.first.count || s.cases != j.first.cases)
      throw error(fmt::format("journal '{}' mixes shards {}/{} and {}/{}", path, j.first.index, j.first.count, s.index,
                              s.count));
  }
  const auto held = static_cast<std::int64_t>(records.size());
  if (held != j.first.shard_cases)
    throw error(fmt::format("journal '{}' holds {} of shard {}/{}'s {} cases: {}", path, held, j.first.index,
                            j.first.count, j.first.shard_cases,
                            held < j.first.shard_cases ? "unfinished (finish it with opval run --resume)"
                                                       : "more than its shard (journals of several runs?)"));
  return j;
}

// The shards neither journal holds, when their cases are missing from the whole run.
void check_every_shard(const std::map<std::int64_t, shard_journal>& shards, const shard_position& run) {
  std::int64_t held = 0;
  for (const auto& [index, j] : shards) held += j.first.shard_cases;
  if (held == run.cases) return;
  std::vector<std::int64_t> missing;
  for (std::int64_t i = 0; i < run.count; ++i)
    if (!shards.contains(i)) missing.push_back(i);
  throw error(fmt::format("shard{} {} of {} missing: the journals hold {} of the run's {} cases",
                          missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), run.count, held, run.cases));
}

}  // namespace

merged_run merge_journals(const std::vector<std::string>& journals) {
  if (journals.empty()) throw error("merge: give the journals of the shards (opval run --shard I/N --jsonl FILE)");
  std::map<std::int64_t, shard_journal> shards;
  const shard_journal* reference = nullptr;
  for (const std::string& path : journals) {
    shard_journal j = read_shard(path);
    // An empty journal holds no case to merge: a shard that had none. (One that should have
    // had some is found by the count of cases below, as missing.)
    if (j.contents.records.empty() && j.contents.coverage.empty()) continue;
    if (j.contents.records.empty())
      throw error(fmt::format("journal '{}' holds a generated suite's coverage and no case: its shard was "
                              "interrupted (finish it with opval run --resume {})",
                              path, path));
    if (reference && (j.first.count != reference->first.count || j.first.cases != reference->first.cases))
      throw error(fmt::format("journals '{}' (shard {}/{} of {} cases) and '{}' (shard {}/{} of {} cases) are shards "
                              "of different runs",
                              reference->path, reference->first.index, reference->first.count, reference->first.cases,
                              path, j.first.index, j.first.count, j.first.cases));
    if (auto same = shards.find(j.first.index); same != shards.end())
      throw error(fmt::format("journals '{}' and '{}' both hold shard {}/{}", same->second.path, path, j.first.index,
                              j.first.count));
    if (reference && j.contents.coverage != reference->contents.coverage)
      throw error(fmt::format("journals '{}' and '{}' cover different generated suites: shards of different runs",
                              reference->path, path));
    const std::int64_t index = j.first.index;
    reference = &(shards[index] = std::move(j));
  }
  if (!reference) throw error(fmt::format("the journals hold no case: {}", fmt::join(journals, ", ")));
  check_every_shard(shards, reference->first);
  merged_run run{reference->contents.coverage, {}, reference->first.count};
  run.records.reserve(static_cast<std::size_t>(reference->first.cases));
  for (auto& [index, j] : shards) {
    double seconds = 0;
    for (case_result& r : j.contents.records) seconds += r.times.total, run.records.push_back(std::move(r));
    run.slowest_shard_seconds = std::max(run.slowest_shard_seconds, seconds);
  }
  std::ranges::sort(run.records, {}, [](const case_result& r) { return r.shard->case_index; });
  for (std::size_t k = 0; k < run.records.size(); ++k) {
    const shard_position& s = *run.records[k].shard;
    if (s.case_index != static_cast<std::int64_t>(k))
      throw error(fmt::format("shard {}/{} records case {} of the run, which {}", s.index, s.count, s.case_index,
                              s.case_index < static_cast<std::int64_t>(k) ? "another shard records too"
                                                                            : "is beyond the run's cases"));
    run.records[k].shard.reset();
  }
  return run;
}

}  // namespace opval
