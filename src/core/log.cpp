// The process-wide diagnostics sink (opval/log.hpp).
#include "opval/log.hpp"

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

namespace opval {
namespace {

/// $OPVAL_LOG as a level (debug, info, warning, error); warning when unset or unknown.
log_level default_threshold() {
  const char* text = std::getenv("OPVAL_LOG");
  const std::string name = text ? text : "";
  if (name == "debug") return log_level::debug;
  if (name == "info") return log_level::info;
  if (name == "error") return log_level::error;
  return log_level::warning;
}

std::string_view level_prefix(log_level level) {
  switch (level) {
    case log_level::debug: return "debug: ";
    case log_level::info: return "";
    case log_level::warning: return "warning: ";
    case log_level::error: return "error: ";
  }
  return "";
}

void write_to_stderr(log_level level, std::string_view message) {
  std::cerr << "opval: " << level_prefix(level) << message << std::endl;
}

struct log_state {
  std::mutex mutex;
  log_sink sink = write_to_stderr;
  log_level threshold = default_threshold();
};

log_state& state() {
  static log_state s;
  return s;
}

}  // namespace

void set_log_sink(log_sink sink, log_level threshold) {
  const bool restore_default = !sink;
  log_state& s = state();
  std::lock_guard lock(s.mutex);
  s.sink = restore_default ? log_sink(write_to_stderr) : std::move(sink);
  s.threshold = restore_default ? default_threshold() : threshold;
}

bool log_enabled(log_level level) {
  log_state& s = state();
  std::lock_guard lock(s.mutex);
  return level >= s.threshold;
}

// The sink runs outside the lock: a Python sink takes the GIL, and a thread that holds the
// GIL may be waiting for this lock.
void log(log_level level, std::string_view message) {
  log_sink sink;
  {
    log_state& s = state();
    std::lock_guard lock(s.mutex);
    if (level < s.threshold) return;
    sink = s.sink;
  }
  sink(level, message);
}

}  // namespace opval
