// The history database: schema, migrations and recording (history/history.hpp).
#include "history/history.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "core/command_output.hpp"
#include "core/journal.hpp"
#include "history/sqlite.hpp"
#include "opval/error.hpp"
#include "opval/verdict.hpp"

namespace opval {
namespace {

// Each migration takes the schema from version i to i + 1; a database records its version in
// PRAGMA user_version. Never edit a released step: add one.
constexpr std::array<std::string_view, history_schema_version> migrations = {
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'bench')),
  started TEXT NOT NULL,
  commit_id TEXT NOT NULL,
  tier TEXT NOT NULL,
  label TEXT NOT NULL,
  host TEXT NOT NULL,
  source TEXT NOT NULL,
  wall_seconds REAL,
  cases INTEGER NOT NULL,
  failed INTEGER NOT NULL
);
CREATE TABLE cases (
  id INTEGER PRIMARY KEY,
  case_key TEXT NOT NULL UNIQUE,
  op TEXT NOT NULL,
  backend TEXT NOT NULL,
  descriptor TEXT NOT NULL,
  seed INTEGER NOT NULL,
  reference TEXT NOT NULL
);
CREATE TABLE results (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  case_id INTEGER NOT NULL REFERENCES cases (id),
  state TEXT NOT NULL,
  reason TEXT NOT NULL,
  known_failure INTEGER NOT NULL,
  error_over_bound REAL,
  seconds REAL,
  median_seconds REAL,
  ci_low REAL,
  ci_high REAL,
  gflops REAL,
  PRIMARY KEY (run_id, position)
);
CREATE INDEX results_by_case ON results (case_id, run_id);
CREATE INDEX runs_by_time ON runs (started, id);
)sql",
};

int user_version(sqlite::connection& db) {
  sqlite::statement q = db.prepare("PRAGMA user_version");
  q.step();
  return static_cast<int>(q.integer(0));
}

// A file that holds tables but no version is someone else's SQLite database.
bool holds_foreign_tables(sqlite::connection& db) {
  sqlite::statement q = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  q.step();
  return q.integer(0) > 0;
}

void migrate(sqlite::connection& db) {
  sqlite::transaction t(db);
  const int version = user_version(db);
  if (version > history_schema_version)
    throw error(fmt::format("history database '{}' has schema version {}, newer than this opval's {}: update opval",
                            db.path(), version, history_schema_version));
  if (version == 0 && holds_foreign_tables(db))
    throw error(fmt::format("'{}' is an SQLite database but not an opval history database", db.path()));
  for (int v = version; v < history_schema_version; ++v) {
    db.execute(migrations[v]);
    db.execute(fmt::format("PRAGMA user_version = {}", v + 1));
  }
  t.commit();
}

std::string now_utc() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

std::string host_name() {
  std::array<char, 256> name{};
  return gethostname(name.data(), name.size() - 1) == 0 ? std::string(name.data()) : std::string();
}

// The worst output's error over its bound: the case's margin, for trends and reports.
std::optional<double> worst_error_over_bound(const verdict& v) {
  std::optional<double> worst;
  for (const output_verdict& o : v.outputs)
    if (o.m.count > 0) worst = std::max(worst.value_or(0.0), o.m.max_error_over_bound);
  return worst;
}

class case_ids {
 public:
  explicit case_ids(sqlite::connection& db)
      : insert_(db.prepare("INSERT OR IGNORE INTO cases (case_key, op, backend, descriptor, seed, reference) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6)")),
        find_(db.prepare("SELECT id FROM cases WHERE case_key = ?1")) {}

  std::int64_t of(const case_key_fields& c) {
    const std::string key = history_case_key(c);
    insert_.reset();
    insert_.bind(1, key).bind(2, c.op).bind(3, c.backend).bind(4, c.descriptor)
        .bind(5, static_cast<std::int64_t>(c.seed)).bind(6, c.reference).run();
    find_.reset();
    find_.bind(1, key);
    find_.step();
    return find_.integer(0);
  }

 private:
  sqlite::statement insert_, find_;
};

std::int64_t insert_run(sqlite::connection& db, std::string_view kind, const run_identity& run, std::int64_t cases,
                        std::int64_t failed) {
  db.prepare("INSERT INTO runs (kind, started, commit_id, tier, label, host, source, wall_seconds, cases, failed) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
      .bind(1, kind).bind(2, run.started.empty() ? now_utc() : run.started).bind(3, run.commit).bind(4, run.tier)
      .bind(5, run.label).bind(6, run.host.empty() ? host_name() : run.host).bind(7, run.source)
      .bind(8, run.wall_seconds).bind(9, cases).bind(10, failed).run();
  return db.last_insert_id();
}

constexpr std::string_view insert_result_sql =
    "INSERT INTO results (run_id, position, case_id, state, reason, known_failure, error_over_bound, seconds, "
    "median_seconds, ci_low, ci_high, gflops) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

std::optional<std::string> first_set(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* v = std::getenv(name); v && *v) return std::string(v);
  return std::nullopt;
}

std::string git_head() {
  std::string out = command_output("git rev-parse HEAD 2>/dev/null").value_or("");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

std::string history_case_key(const case_key_fields& c) {
  return fmt::format("{}\n{}\n{}\n{}", c.backend, c.descriptor, c.seed, c.reference);
}

std::string history_case_key(const case_identity& c) {
  return history_case_key(case_key_fields{c.op, c.backend, c.descriptor, c.reference, c.seed});
}

history_db::history_db(const std::string& path, bool create)
    : db_(std::make_unique<sqlite::connection>(path, create)) {
  migrate(*db_);
}

history_db::~history_db() = default;
history_db::history_db(history_db&&) noexcept = default;

int history_db::schema_version() const { return user_version(*db_); }

std::int64_t history_db::record_run(const run_identity& run, std::span<const case_result> results) {
  sqlite::transaction t(*db_);
  const auto failed = std::ranges::count_if(results, [](const case_result& r) { return is_failure(r.v.st); });
  const std::int64_t run_id = insert_run(*db_, "run", run, static_cast<std::int64_t>(results.size()), failed);
  case_ids ids(*db_);
  sqlite::statement insert = db_->prepare(insert_result_sql);
  std::int64_t position = 0;
  for (const case_result& r : results) {
    insert.reset();
    insert.bind(1, run_id).bind(2, position++).bind(3, ids.of({r.op, r.backend, r.descriptor, r.reference, r.seed}))
        .bind(4, to_string(r.v.st)).bind(5, r.v.reason).bind(6, std::int64_t{r.known_failure.has_value()})
        .bind(7, worst_error_over_bound(r.v)).bind(8, std::optional<double>(r.times.total))
        .bind(9, std::optional<double>()).bind(10, std::optional<double>()).bind(11, std::optional<double>())
        .bind(12, std::optional<double>()).run();
  }
  t.commit();
  return run_id;
}

std::int64_t history_db::record_bench(const run_identity& run, std::span<const bench_record> results) {
  sqlite::transaction t(*db_);
  const auto failed = std::ranges::count_if(results, [](const bench_record& r) {
    const std::optional<state> s = parse_state(r.state);
    return s && is_failure(*s);
  });
  const std::int64_t run_id = insert_run(*db_, "bench", run, static_cast<std::int64_t>(results.size()), failed);
  case_ids ids(*db_);
  sqlite::statement insert = db_->prepare(insert_result_sql);
  std::int64_t position = 0;
  for (const bench_record& r : results) {
    const auto timed = [&](double v) { return r.timed ? std::optional<double>(v) : std::nullopt; };
    insert.reset();
    insert.bind(1, run_id).bind(2, position++).bind(3, ids.of({r.op, r.backend, r.descriptor, "", r.seed}))
        .bind(4, r.state).bind(5, "").bind(6, std::int64_t{0}).bind(7, std::optional<double>())
        .bind(8, std::optional<double>()).bind(9, timed(r.median)).bind(10, timed(r.ci_low))
        .bind(11, timed(r.ci_high)).bind(12, timed(r.gflops)).run();
  }
  t.commit();
  return run_id;
}

std::string detect_commit() {
  if (std::optional<std::string> c = first_set({"OPVAL_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA", "GIT_COMMIT",
                                               "BUILD_SOURCEVERSION", "BUILDKITE_COMMIT"}))
    return *c;
  return git_head();
}

run_identity session_run_identity(const std::string& commit, const std::string& tier, const std::string& label,
                                  const std::string& source, std::optional<double> wall_seconds) {
  return {.commit = commit.empty() ? detect_commit() : commit, .tier = tier, .label = label, .source = source,
          .wall_seconds = wall_seconds};
}

std::string recorded_note(const std::string& path, std::int64_t run, std::size_t cases, const run_identity& identity) {
  return fmt::format("opval: recorded {} case{} in history '{}' (run {}, commit {})", cases, cases == 1 ? "" : "s", path,
                     run, identity.commit.empty() ? "unknown" : identity.commit.substr(0, 12));
}

std::int64_t record_file(history_db& db, const std::string& path, run_identity run) {
  if (run.source.empty()) run.source = path;
  if (is_bench_file(path)) return db.record_bench(run, read_bench_records(path));
  journal_contents j = read_journal(path);
  if (j.unfinished) throw error(fmt::format("journal '{}' is unfinished (its last line is cut short): finish it with --resume first", path));
  if (j.records.empty()) throw error(fmt::format("journal '{}' holds no case", path));
  return db.record_run(run, j.records);
}

}  // namespace opval
