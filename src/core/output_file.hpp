#pragma once
// A file a run writes its records to — a journal, bench JSON Lines or CSV — checked so that
// nothing is lost: never an input of the same run, every write accounted for.
#include <cstddef>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/problem.hpp"

namespace opval {

class output_file {
 public:
  /// Opens `path` for the run's records (appended to when `append`; its folder made when
  /// missing); `what` names it in errors ("JSONL", "CSV"). Throws opval::error for an empty
  /// path, for a path that is one of `inputs` — the same file under another name too — which
  /// the run would overwrite while reading it, and for a file that cannot be written.
  output_file(const std::string& path, bool append, std::string_view what, std::span<const std::string> inputs = {});

  /// The stream the records are written to, each followed by a flush.
  std::ostream& stream() { return out_; }
  /// Accounts for one record written and flushed: whether it reached the file.
  void record_written();
  /// Empty while every record reached the file; else one line saying which file failed, why,
  /// and how many of the records did reach it (a full disk, a closed pipe).
  const std::string& failure() const { return failure_; }
  /// Throws opval::error with failure() when records were lost: at the end of a run, whose
  /// verdicts then do not stand (the CLI's exit code 2).
  void check_reached() const;

 private:
  std::string path_, what_;
  std::ofstream out_;
  std::size_t written_ = 0, records_ = 0;
  std::string failure_, reason_;
};

/// Whether two paths name one file: the same existing file under any spelling or link, or, for
/// files not yet written, the same normalized path.
bool names_same_file(const std::string& a, const std::string& b);

/// The files a run reads its problems from (each problem's source file; a descriptor given on
/// the command line has none), and `others` (a known-failures file, judged arrays; "" for none):
/// what its outputs must not overwrite.
std::vector<std::string> input_files(std::span<const located_problem> problems, std::vector<std::string> others = {});

}  // namespace opval
