#pragma once
// Diagnostics of the library (worker processes started and lost, cases run), as opposed to
// results, which go to reporters. One process-wide sink: stderr by default, Python's logging
// module when opval runs inside Python (python/src/bind_log.cpp).
#include <functional>
#include <string>
#include <string_view>

namespace opval {

enum class log_level : int { debug = 10, info = 20, warning = 30, error = 40 };  ///< Python's values

/// Receives every message at or above the threshold. May be called from any thread that runs
/// cases, and from two at once.
using log_sink = std::function<void(log_level, std::string_view)>;

/// Replaces the sink and its threshold; an empty sink restores the default (stderr,
/// `opval: warning: ...`, threshold warning, or the level named by $OPVAL_LOG).
void set_log_sink(log_sink sink, log_level threshold);
/// True when a message at `level` would reach the sink: test before formatting costly text.
bool log_enabled(log_level level);
/// Sends one message (no trailing newline) to the sink when `level` reaches the threshold.
void log(log_level level, std::string_view message);

}  // namespace opval
