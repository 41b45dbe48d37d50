// Per-case runner overhead on a tiny problem: everything run_case spends outside the kernel,
// the reference and the comparison arithmetic (allocation, fill, bound set-up, verdict,
// the perturbation re-run's bookkeeping). Target: <= 50 us.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "opval/backend.hpp"
#include "opval/runner.hpp"

int main(int argc, char** argv) {
  const char* descriptor = argc > 1 ? argv[1] : "relu shape=4x4";
  const int cases = argc > 2 ? std::atoi(argv[2]) : 2000;
  opval::problem p = opval::parse_problem(descriptor);
  auto backend = opval::make_backend("sim");
  opval::run_options o;
  std::vector<double> overhead, total;
  for (int i = 0; i < cases; ++i) {
    o.seed = i + 1;
    auto r = opval::run_case(p, *backend, o);
    if (r.v.st != opval::state::passed) {
      std::fprintf(stderr, "case did not pass: %s\n", r.v.reason.c_str());
      return 1;
    }
    const auto& t = r.times;
    total.push_back(t.total);
    overhead.push_back(t.total - t.execute - t.reference - t.compare);
  }
  std::sort(overhead.begin(), overhead.end());
  std::sort(total.begin(), total.end());
  auto pct = [](const std::vector<double>& v, double q) { return v[static_cast<std::size_t>(q * (v.size() - 1))] * 1e6; };
  std::printf("problem              %s (%d cases, sim backend, perturbation check on)\n", descriptor, cases);
  std::printf("case wall time       median %.1f us, p90 %.1f us\n", pct(total, 0.5), pct(total, 0.9));
  std::printf("runner overhead      median %.1f us, p90 %.1f us  (target <= 50 us)\n", pct(overhead, 0.5),
              pct(overhead, 0.9));
  return 0;
}
