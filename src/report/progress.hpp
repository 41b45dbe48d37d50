#pragma once
// Progress of a run on stderr: on a terminal one line redrawn in place (cases done of the total,
// passed and failed so far, the time left, the case running and for how long); in a log a line
// every 30 s. A run is never silent for long, even while one case takes minutes.
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string_view>
#include <thread>

#include "opval/problem.hpp"
#include "opval/runner.hpp"
#include "opval/session.hpp"

namespace opval {

class progress_meter {
 public:
  /// Off: does nothing. The log's period is 30 s, or $OPVAL_PROGRESS_INTERVAL seconds.
  progress_meter(progress_mode mode, int fd, int width, std::size_t total);
  ~progress_meter();
  progress_meter(const progress_meter&) = delete;
  progress_meter& operator=(const progress_meter&) = delete;

  /// A case starts running (its text made only when the meter is on).
  void started(const problem& p, std::string_view backend);
  /// The reporters are about to print a result: the line is cleared and held still until
  /// finished().
  void before_output();
  /// A result was reported: counted, and the line drawn again.
  void finished(const case_result& r);
  /// Stops the meter and clears its line (before the run's closing notes).
  void stop();

 private:
  void tick();
  void draw_locked();
  void clear_locked();
  void log_line_locked();
  double seconds_since(double start) const;
  /// The time left at the pace so far, formatted into `out` ("?" before any case is done).
  void format_time_left(char* out, std::size_t size) const;

  progress_mode mode_;
  int fd_;
  int width_;
  std::size_t total_, done_ = 0;
  int passed_ = 0, failed_ = 0;
  double period_ = 30;
  double run_start_ = 0, case_start_ = 0, last_log_ = 0;
  // Fixed buffers: the ticking thread never allocates, so it cannot disturb the heap
  // accounting of a kernel running in this process (--isolation none).
  char current_[256] = {};
  bool drawn_ = false, stopping_ = false;
  std::mutex mutex_;
  std::unique_lock<std::mutex> held_;
  std::condition_variable wake_;
  std::thread ticker_;
};

}  // namespace opval
