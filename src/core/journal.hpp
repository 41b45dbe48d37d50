#pragma once
// The journal of a run: its JSON Lines file (--jsonl), one record appended and flushed per
// case, from which `opval run --resume` finishes an interrupted run.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opval/runner.hpp"

namespace opval {

/// What a journal holds, read without changing it: a generated suite's coverage lines, the
/// records, and whether its last line is unfinished (the run was killed while writing it; that
/// line is left out). Throws opval::error when the file cannot be read or a line is not a
/// record (naming it).
struct journal_contents {
  std::vector<std::string> coverage;
  std::vector<case_result> records;
  bool unfinished = false;
  std::size_t complete_bytes = 0;  ///< the size of its finished lines
};
journal_contents read_journal(const std::string& path);

/// The records of the journal at `path`. A last line without its newline (the run was killed
/// while writing it) is cut off the file, so that appending continues on a clean line.
/// Throws opval::error when the file cannot be read or a line is not a record (naming it).
std::vector<case_result> recover_journal(const std::string& path);

/// The recorded results of a journal, found by case: descriptor, backend, seed and source.
/// Each record answers once, so a problem listed twice matches two records, in order.
class journal_index {
 public:
  explicit journal_index(std::vector<case_result> records);
  /// The recorded result of the case, removed from the index; nullopt when none is left.
  std::optional<case_result> take(const case_identity& id);
  /// Records no take() has matched (yet).
  std::size_t left() const { return left_; }

 private:
  std::map<std::string, std::deque<case_result>> by_case_;
  std::size_t left_ = 0;
};

}  // namespace opval
