#pragma once
// What the stub collectors (nvtx_stub.cpp, itt_stub.cpp) record: one line per event,
// "<pid> <tid> <event> <name>", appended to $OPVAL_PROFILER_STUB_LOG (a worker process and
// its caller append to the same file; O_APPEND keeps each line whole). test_profiler_ranges.cpp
// reads it back.
#include <cstdlib>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace opval_stub {

inline void record(std::string_view event, std::string_view name = {}) {
  const char* path = std::getenv("OPVAL_PROFILER_STUB_LOG");
  if (!path) return;
  std::string line = std::to_string(::getpid()) + " " + std::to_string(::syscall(SYS_gettid)) + " ";
  line.append(event).append(" ").append(name).append("\n");
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace opval_stub
