#pragma once
// The standard output of a shell command (git, for the history's commit and --changes).
#include <optional>
#include <string>

namespace opval {

/// What `command` (run by /bin/sh) wrote to stdout; nullopt when it could not start or exited
/// non-zero.
std::optional<std::string> command_output(const std::string& command);

}  // namespace opval
