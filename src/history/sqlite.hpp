#pragma once
// A thin RAII layer over SQLite's C API for the history database (history/history.hpp): a
// connection, prepared statements with bound values, and every failure an opval::error that
// names the database file and what SQLite said.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace opval::sqlite {

class statement;

/// An open database file.
class connection {
 public:
  /// Opens `path`, creating it when `create` (else a missing file is an opval::error). Waits up
  /// to 10 s for another process's write lock (shards recording at once).
  connection(const std::string& path, bool create);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Runs SQL without results (several statements allowed).
  void execute(std::string_view sql);
  statement prepare(std::string_view sql);
  std::int64_t last_insert_id() const;
  /// Rolls back the open transaction, ignoring errors (from a destructor, during unwinding).
  void rollback_quietly() noexcept;
  const std::string& path() const { return path_; }
  /// An opval::error naming the file, `doing` and SQLite's last message.
  [[noreturn]] void fail(std::string_view doing) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

/// A prepared statement: bind values (1-based), then step through rows.
class statement {
 public:
  statement(connection& c, sqlite3_stmt* s) : c_(&c), s_(s) {}
  ~statement();
  statement(statement&& o) noexcept : c_(o.c_), s_(o.s_) { o.s_ = nullptr; }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  statement& bind(int i, std::string_view text);
  statement& bind(int i, std::int64_t value);
  statement& bind(int i, double value);
  statement& bind(int i, std::optional<double> value);  ///< NULL when absent
  /// The next row: true while there is one.
  bool step();
  /// Runs a statement that returns no row.
  void run();
  /// Back to before the first row, bindings kept (to run it again with others bound).
  void reset();

  std::string text(int column) const;
  std::int64_t integer(int column) const;
  double real(int column) const;
  std::optional<double> optional_real(int column) const;  ///< nullopt for NULL

 private:
  connection* c_;
  sqlite3_stmt* s_;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back when left by an exception.
class transaction {
 public:
  explicit transaction(connection& c);
  ~transaction();
  void commit();

 private:
  connection& c_;
  bool done_ = false;
};

}  // namespace opval::sqlite
