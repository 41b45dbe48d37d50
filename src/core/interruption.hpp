#pragma once
// Ctrl-C and SIGTERM during a run (docs/CLI.md, "Interrupted runs"): while an
// interruption_watch lives, SIGINT and SIGTERM only note the signal, so that the session ends
// between two cases with its journal whole and says how to resume, instead of dying mid-record.
// A second signal has its default effect.

namespace opval::detail {

class interruption_watch {
 public:
  /// Installs the handlers (the previous ones come back when the watch ends).
  interruption_watch();
  ~interruption_watch();
  interruption_watch(const interruption_watch&) = delete;
  interruption_watch& operator=(const interruption_watch&) = delete;

  /// The signal received since the watch began (SIGINT or SIGTERM), 0 when none.
  int signal() const;
};

}  // namespace opval::detail
