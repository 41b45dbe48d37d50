#include "opval/error.hpp"

namespace opval {

parse_error::parse_error(const std::string& message, std::string token, std::size_t column)
    : error(message), token_(std::move(token)), column_(column) {}

}  // namespace opval
