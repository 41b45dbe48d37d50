#pragma once
// Errors a user can act on. The CLI prints what() as one line and exits with code 2.
#include <exception>
#include <stdexcept>
#include <string>

namespace opval {

/// Any error caused by bad input: unknown names, impossible shapes, unreadable files.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A descriptor that does not parse; what() names the offending token and its column.
class parse_error : public error {
 public:
  parse_error(const std::string& message, std::string token, std::size_t column);
  const std::string& token() const { return token_; }
  std::size_t column() const { return column_; }

 private:
  std::string token_;
  std::size_t column_;
};

/// The one line a command prints for bad input: the message's first line, plus the offending
/// token of a parse_error when the message does not show it; control bytes shown as \xNN, and
/// a message over 1000 bytes (a --problems file that is neither text nor short) cut to its
/// head and tail.
std::string error_line(const std::exception& e);

}  // namespace opval
