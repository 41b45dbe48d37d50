// Per-case cost of process isolation when batched: the same tiny case (default `relu
// shape=1`, sim backend) run in this process (run_case_caught) and in a persistent worker
// process (case_worker), interleaved case by case so both see the same machine noise.
// Isolation's cost is the difference of the medians: request and answer through the pipes,
// the JSON of the case and of its record, the worker's problem parse. Target: <= 1 ms per
// case. The worker's start (posix_spawn, loading opval) is paid once and shown apart.
//
// Run it with OMP_WAIT_POLICY=passive for a case with OpenMP regions (matmul): after each
// in-process case, this process's OpenMP threads spin for a while waiting for more work, and
// on a 2-core machine they take a core from the worker's next case, which then runs slower
// ("the case itself" differs between the two lines). A real isolated run has no such
// neighbour: its runner runs no kernels.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.hpp"
#include "core/isolation.hpp"

#ifndef OPVAL_CLI_PATH
#error "bench/CMakeLists.txt must define OPVAL_CLI_PATH, the opval executable the worker runs"
#endif

int main(int argc, char** argv) {
  const char* descriptor = argc > 1 ? argv[1] : "relu shape=1";
  const int cases = argc > 2 ? std::atoi(argv[2]) : 2000;
  const opval::located_problem lp{opval::parse_problem(descriptor), "<bench>"};
  auto sim = opval::make_backend("sim");
  const opval::backend_ref ref{"sim", ""};
  const opval::run_options o;
  opval::case_worker worker(opval::isolation_options{.worker_executable = OPVAL_CLI_PATH});

  const auto t0 = std::chrono::steady_clock::now();
  if (worker.run(lp, ref, *sim, o).v.st != opval::state::passed) {
    std::fprintf(stderr, "the case did not pass in the worker\n");
    return 1;
  }
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  bool all_passed = true;
  std::vector<double> inside[2];  // the case's own time (case_timings::total), per side
  auto record = [&](int side, const opval::case_result& r) {
    all_passed &= r.v.st == opval::state::passed;
    inside[side].push_back(r.times.total);
  };
  const std::vector<double> medians = opval::bench::interleaved_medians(
      {[&] { record(0, opval::run_case_caught(lp, *sim, o)); }, [&] { record(1, worker.run(lp, ref, *sim, o)); }},
      cases);
  for (auto& v : inside) std::sort(v.begin(), v.end());
  if (!all_passed) {
    std::fprintf(stderr, "a case did not pass\n");
    return 1;
  }
  std::printf("problem                 %s (%d cases each, sim backend, default run options)\n", descriptor, cases);
  std::printf("in process (none)       median %.1f us per case (the case itself: %.1f us)\n", medians[0] * 1e6,
              inside[0][cases / 2] * 1e6);
  std::printf("worker process          median %.1f us per case (the case itself: %.1f us)\n", medians[1] * 1e6,
              inside[1][cases / 2] * 1e6);
  std::printf("isolation overhead      %.1f us per case (target <= 1000 us)\n", (medians[1] - medians[0]) * 1e6);
  std::printf("worker start + 1st case %.1f ms (once per run, and after each CRASH or TIMEOUT)\n", first * 1e3);
  return 0;
}
