// The SQLite layer (history/sqlite.hpp).
#include "history/sqlite.hpp"

#include <sqlite3.h>

#include <filesystem>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval::sqlite {

connection::connection(const std::string& path, bool create) : path_(path) {
  if (!create && !std::filesystem::exists(path)) throw error(fmt::format("no history database '{}'", path));
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw error(fmt::format("cannot open history database '{}': {}", path, why));
  }
  sqlite3_busy_timeout(db_, 10000);
  sqlite3_extended_result_codes(db_, 1);
  execute("PRAGMA foreign_keys = ON");
}

connection::~connection() { sqlite3_close(db_); }

void connection::fail(std::string_view doing) const {
  if ((sqlite3_extended_errcode(db_) & 0xff) == SQLITE_NOTADB)
    throw error(fmt::format("'{}' is not an SQLite database, so not an opval history database", path_));
  throw error(fmt::format("history database '{}': {}: {}", path_, doing, sqlite3_errmsg(db_)));
}

void connection::execute(std::string_view sql) {
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail("cannot run SQL");
}

statement connection::prepare(std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK)
    fail("cannot prepare a query (not an opval history database?)");
  return statement(*this, s);
}

void connection::rollback_quietly() noexcept { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

std::int64_t connection::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

statement::~statement() { sqlite3_finalize(s_); }

statement& statement::bind(int i, std::string_view text) {
  if (sqlite3_bind_text(s_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    c_->fail("cannot bind a value");
  return *this;
}

statement& statement::bind(int i, std::int64_t value) {
  if (sqlite3_bind_int64(s_, i, value) != SQLITE_OK) c_->fail("cannot bind a value");
  return *this;
}

statement& statement::bind(int i, double value) {
  if (sqlite3_bind_double(s_, i, value) != SQLITE_OK) c_->fail("cannot bind a value");
  return *this;
}

statement& statement::bind(int i, std::optional<double> value) {
  if (value) return bind(i, *value);
  if (sqlite3_bind_null(s_, i) != SQLITE_OK) c_->fail("cannot bind a value");
  return *this;
}

bool statement::step() {
  const int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  c_->fail("query failed");
}

void statement::run() {
  while (step()) {
  }
}

void statement::reset() { sqlite3_reset(s_); }

std::string statement::text(int column) const {
  const unsigned char* t = sqlite3_column_text(s_, column);
  return t ? std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s_, column)) : std::string();
}

std::int64_t statement::integer(int column) const { return sqlite3_column_int64(s_, column); }

double statement::real(int column) const { return sqlite3_column_double(s_, column); }

std::optional<double> statement::optional_real(int column) const {
  if (sqlite3_column_type(s_, column) == SQLITE_NULL) return std::nullopt;
  return real(column);
}

transaction::transaction(connection& c) : c_(c) { c_.execute("BEGIN IMMEDIATE"); }

transaction::~transaction() {
  if (!done_) c_.rollback_quietly();
}

void transaction::commit() {
  c_.execute("COMMIT");
  done_ = true;
}

}  // namespace opval::sqlite
