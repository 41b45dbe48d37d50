// opval-worker: the worker process of process isolation on its own (src/core/isolation.hpp),
// installed beside libopval so that any program embedding the library, not only the opval
// CLI, runs its cases isolated without handling `__worker` itself
// (default_worker_executable). Linked with the heap hooks, as the CLI is, so that the kernel
// heap of each case is measured in the worker too.
#include <cstdio>
#include <string_view>

#include "core/isolation.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != opval::worker_argument) {
    std::fprintf(stderr, "opval-worker: started by opval's process isolation only (%s <runner pid>)\n",
                 opval::worker_argument);
    return 2;
  }
  return opval::worker_main(argc, argv);
}
