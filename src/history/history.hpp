#pragma once
// The run history (docs/FLEET.md, "History"): every run's and benchmark's results in one
// SQLite file, so that later runs can ask which cases failed recently, which are flaky, what
// each case costs, and `opval history` can say since which commit a case fails and how its
// performance moved. The schema is versioned (PRAGMA user_version) and migrated forward when
// a database is opened; docs/FLEET.md documents it.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_records.hpp"
#include "opval/runner.hpp"

namespace opval {

namespace sqlite {
class connection;
}

/// The schema version this build writes (migrations bring older files up to it).
inline constexpr int history_schema_version = 1;

/// What is known of a run besides its records.
struct run_identity {
  std::string commit;   ///< of the code under test ("" when not known)
  std::string tier;     ///< smoke, regression, nightly, or the caller's name ("" none)
  std::string label;    ///< free text: a branch, a pipeline, a machine class
  std::string started;  ///< UTC, ISO 8601 ("" = now)
  std::string host;     ///< "" = this machine's name
  std::string source;   ///< where the records came from: "opval run", a journal's path
  std::optional<double> wall_seconds;  ///< the whole run's time, when known
};

/// A case as history knows it across runs: the same backend, problem, seed and reference.
struct case_key_fields {
  std::string op, backend, descriptor, reference;
  std::uint64_t seed = 0;
};
/// The key of a case (backend, descriptor, seed, reference joined by newlines).
std::string history_case_key(const case_key_fields& c);
std::string history_case_key(const case_identity& c);

/// An open history database.
class history_db {
 public:
  /// Opens (with `create`, makes) the database at `path` and migrates it to
  /// history_schema_version. Throws opval::error naming the file when it cannot be opened, is
  /// not an opval history database, or was written by a newer opval.
  history_db(const std::string& path, bool create);
  ~history_db();
  history_db(history_db&&) noexcept;

  /// Records a run's results, in their order; returns the run's id.
  std::int64_t record_run(const run_identity& run, std::span<const case_result> results);
  /// Records a benchmark's results; returns the run's id.
  std::int64_t record_bench(const run_identity& run, std::span<const bench_record> results);

  sqlite::connection& connection() { return *db_; }
  int schema_version() const;

 private:
  std::unique_ptr<sqlite::connection> db_;
};

/// The commit of the code under test when the caller names none: the first of OPVAL_COMMIT,
/// GITHUB_SHA, CI_COMMIT_SHA (GitLab), GIT_COMMIT (Jenkins), BUILD_SOURCEVERSION (Azure),
/// BUILDKITE_COMMIT that is set, else `git rev-parse HEAD` in the working directory, else "".
std::string detect_commit();

/// A run's identity as a session records it: `commit` (detect_commit() when empty), `tier`,
/// `label`, where the records came from, and the run's wall time.
run_identity session_run_identity(const std::string& commit, const std::string& tier, const std::string& label,
                                  const std::string& source, std::optional<double> wall_seconds);

/// The note a session prints once it recorded a run: "opval: recorded 47 cases in history
/// 'h.db' (run 3, commit 1a2b3c4d5e6f)".
std::string recorded_note(const std::string& path, std::int64_t run, std::size_t cases, const run_identity& identity);

/// Records the journal or benchmark file at `path` (detected from its first record): the
/// `opval history record` command. Returns the run's id. Throws opval::error naming the file
/// when it is neither, or unfinished.
std::int64_t record_file(history_db& db, const std::string& path, run_identity run);

}  // namespace opval
