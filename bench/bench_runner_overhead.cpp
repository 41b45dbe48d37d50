// Per-case runner overhead on a tiny problem: everything run_case spends outside the kernel,
// the reference and the comparison arithmetic (allocation, fill, bound set-up, verdict,
// the perturbation re-run's bookkeeping). Target: <= 50 us. Measured twice: with the default
// checks (guard pages, a second run over the other poison, input hashing, the perturbation
// re-run) and with all four off, which is the runner itself.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "opval/backend.hpp"
#include "opval/runner.hpp"

namespace {

struct figures {
  std::vector<double> overhead, total;
};

// `cases` runs of p on `backend` with `o` (seeds 1..cases); nullopt when a case did not pass.
std::optional<figures> measure(const opval::problem& p, opval::backend& backend, opval::run_options o, int cases) {
  figures f;
  for (int i = 0; i < cases; ++i) {
    o.seed = i + 1;
    auto r = opval::run_case(p, backend, o);
    if (r.v.st != opval::state::passed) {
      std::fprintf(stderr, "case did not pass: %s\n", r.v.reason.c_str());
      return std::nullopt;
    }
    const auto& t = r.times;
    f.total.push_back(t.total);
    f.overhead.push_back(t.total - t.execute - t.reference - t.compare);
  }
  std::sort(f.overhead.begin(), f.overhead.end());
  std::sort(f.total.begin(), f.total.end());
  return f;
}

double percentile_us(const std::vector<double>& v, double q) { return v[static_cast<std::size_t>(q * (v.size() - 1))] * 1e6; }

}  // namespace

int main(int argc, char** argv) {
  const char* descriptor = argc > 1 ? argv[1] : "relu shape=4x4";
  const int cases = argc > 2 ? std::atoi(argv[2]) : 2000;
  opval::problem p = opval::parse_problem(descriptor);
  auto backend = opval::make_backend("sim");
  opval::run_options checks_off;
  checks_off.guard = checks_off.poison_check = checks_off.input_check = checks_off.perturb_check = false;
  std::printf("problem              %s (%d cases, sim backend)\n", descriptor, cases);
  for (const auto& [what, o] : {std::pair{"default checks", opval::run_options{}}, std::pair{"checks off", checks_off}}) {
    const auto f = measure(p, *backend, o, cases);
    if (!f) return 1;
    std::printf("%-20s case wall time median %.1f us, p90 %.1f us; runner overhead median %.1f us, p90 %.1f us "
                "(target <= 50 us)\n",
                what, percentile_us(f->total, 0.5), percentile_us(f->total, 0.9), percentile_us(f->overhead, 0.5),
                percentile_us(f->overhead, 0.9));
  }
  return 0;
}
