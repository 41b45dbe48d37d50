#include "core/interruption.hpp"

#include <signal.h>

namespace opval::detail {
namespace {

volatile sig_atomic_t received = 0;
struct sigaction previous_int{}, previous_term{};

extern "C" void note_signal(int signo) { received = signo; }

}  // namespace

interruption_watch::interruption_watch() {
  received = 0;
  struct sigaction sa{};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART: a write or a wait under way completes, the loop checks between cases.
  // SA_RESETHAND: a second Ctrl-C ends opval at once (a case in process may take long); the
  // journal survives that too, as it survives SIGKILL.
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  ::sigaction(SIGINT, &sa, &previous_int);
  ::sigaction(SIGTERM, &sa, &previous_term);
}

interruption_watch::~interruption_watch() {
  ::sigaction(SIGINT, &previous_int, nullptr);
  ::sigaction(SIGTERM, &previous_term, nullptr);
}

int interruption_watch::signal() const { return received; }

}  // namespace opval::detail
