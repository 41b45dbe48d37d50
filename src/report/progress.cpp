// The progress meter (report/progress.hpp). Writes with write(2) from fixed buffers: its thread
// must not allocate (see current_), and its line must not interleave with the reporters' output,
// which the main thread prints while holding the meter still.
#include "report/progress.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace opval {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// "0.4s", "7s", "2m05s", "1h04m" into `out`.
void format_span(double seconds, char* out, std::size_t size) {
  const long s = static_cast<long>(seconds + 0.5);
  if (seconds < 9.95) std::snprintf(out, size, "%.1fs", seconds);
  else if (s < 60) std::snprintf(out, size, "%lds", s);
  else if (s < 3600) std::snprintf(out, size, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(out, size, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
}

void write_all(int fd, const char* text, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, text, size);
    if (n <= 0) return;  // a closed or full stderr: progress is not worth failing for
    text += n, size -= static_cast<std::size_t>(n);
  }
}

double period_from_environment() {
  if (const char* text = std::getenv("OPVAL_PROGRESS_INTERVAL")) {
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end != text && *end == '\0' && v > 0) return v;
  }
  return 30;
}

}  // namespace

progress_meter::progress_meter(progress_mode mode, int fd, int width, std::size_t total)
    : mode_(mode), fd_(fd), width_(std::max(width, 20)), total_(total), period_(period_from_environment()),
      held_(mutex_, std::defer_lock) {
  if (mode_ == progress_mode::off) return;
  run_start_ = case_start_ = last_log_ = now_seconds();
  ticker_ = std::thread([this] { tick(); });
}

progress_meter::~progress_meter() { stop(); }

void progress_meter::stop() {
  if (!ticker_.joinable()) return;
  if (held_.owns_lock()) held_.unlock();
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    clear_locked();
  }
  wake_.notify_all();
  ticker_.join();
}

void progress_meter::started(const problem& p, std::string_view backend) {
  if (mode_ == progress_mode::off) return;
  const std::string problem = p.to_string();
  const std::lock_guard lock(mutex_);
  std::snprintf(current_, sizeof current_, "%.*s on %.*s", static_cast<int>(problem.size()), problem.data(),
                static_cast<int>(backend.size()), backend.data());
  case_start_ = now_seconds();
  if (mode_ == progress_mode::terminal) draw_locked();
}

void progress_meter::before_output() {
  if (mode_ == progress_mode::off) return;
  held_.lock();
  clear_locked();
}

void progress_meter::finished(const case_result& r) {
  if (mode_ == progress_mode::off) return;
  if (!held_.owns_lock()) held_.lock();
  ++done_;
  if (r.v.st == state::passed) ++passed_;
  else if (is_failure(r.v.st) && !r.known_failure) ++failed_;
  current_[0] = '\0';
  if (mode_ == progress_mode::terminal) draw_locked();
  held_.unlock();
}

double progress_meter::seconds_since(double start) const { return now_seconds() - start; }

void progress_meter::format_time_left(char* out, std::size_t size) const {
  if (done_ == 0) {
    std::snprintf(out, size, "?");
    return;
  }
  format_span(seconds_since(run_start_) / static_cast<double>(done_) * static_cast<double>(total_ - done_), out, size);
}

void progress_meter::tick() {
  // Signals stay with the main thread, whose waits they must interrupt (interruption.hpp).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // A terminal's line shows the running case's time: redrawn every second.
    wake_.wait_for(lock, std::chrono::duration<double>(mode_ == progress_mode::terminal ? 1.0 : std::min(period_, 1.0)));
    if (stopping_) break;
    if (mode_ == progress_mode::terminal) draw_locked();
    else if (seconds_since(last_log_) >= period_) log_line_locked();
  }
}

void progress_meter::draw_locked() {
  char eta[32], running[32] = "";
  format_time_left(eta, sizeof eta);
  if (current_[0]) format_span(seconds_since(case_start_), running, sizeof running);
  char line[512];
  int n = std::snprintf(line, sizeof line, "\r\033[K[%zu/%zu] %d passed, %d failed, ETA %s%s%s%s%s", done_, total_,
                        passed_, failed_, eta, current_[0] ? " | " : "", current_, current_[0] ? " " : "", running);
  n = std::clamp(n, 0, static_cast<int>(sizeof line) - 1);
  // One terminal line at most (the 4 bytes of "\r\033[K" take no columns): a wrapped line
  // could not be cleared by the next "\r".
  const int visible_limit = width_ - 1 + 4;
  write_all(fd_, line, static_cast<std::size_t>(std::min(n, visible_limit)));
  drawn_ = true;
}

void progress_meter::clear_locked() {
  if (mode_ != progress_mode::terminal || !drawn_) return;
  write_all(fd_, "\r\033[K", 4);
  drawn_ = false;
}

void progress_meter::log_line_locked() {
  char elapsed[32], left[32], running[32] = "";
  format_span(seconds_since(run_start_), elapsed, sizeof elapsed);
  format_time_left(left, sizeof left);
  if (current_[0]) format_span(seconds_since(case_start_), running, sizeof running);
  char line[600];
  int n = std::snprintf(line, sizeof line, "opval: %zu of %zu cases done (%d passed, %d failed) in %s, about %s left%s%s%s%s\n",
                        done_, total_, passed_, failed_, elapsed, left, current_[0] ? "; running " : "", current_,
                        current_[0] ? " for " : "", running);
  n = std::clamp(n, 0, static_cast<int>(sizeof line) - 1);
  write_all(fd_, line, static_cast<std::size_t>(n));
  last_log_ = now_seconds();
}

}  // namespace opval
