// The benchmark engine's four figures (issue 6; docs/PERFORMANCE.md, docs/BENCHMARKING.md),
// on a calibrated spin kernel, against Google Benchmark where the figure names it:
//
//   accuracy       the median opval reports for a 1 us, 10 us and 1 ms spin, against its known
//                  length: within 2%
//   overhead       the harness's own time per sample, outside the kernel: at most 100 ns
//   repeatability  10 interleaved invocations (processes) each of opval and of Google Benchmark
//                  (defaults, 10 repetitions) on a 50 us spin: the spread of opval's medians
//                  against Google Benchmark's, with a bootstrap CI of the ratio; every opval
//                  median more than 5% off the pooled one must carry a warning
//   time           on the same invocations, the wall time each takes to its figure
//
//   bench_timing_figures [all|accuracy|overhead|repeatability] [--invocations N] [--min-time S]
//   bench_timing_figures invoke opval|gbench ITERATIONS MIN_TIME   (one invocation: a JSON line;
//                                                                  MIN_TIME < 0: opval's default)
//
// The spin is a dependent chain of multiply-adds whose length is set in iterations; its time
// per iteration is calibrated once by the median of 200 runs of about 1 ms each (the clock's
// cost is then 0.003% of a run), and every length is iterations x that time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/rng.hpp"
#include "bench/sample_summary.hpp"
#include "bench/sampler.hpp"

namespace {

using steady = std::chrono::steady_clock;
double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

/// A chain of dependent multiply-adds (an LCG step): each waits on the last, so its time is
/// iterations x the latency of one step, on any compiler. The chain carries over from call to
/// call (`chain`): independent calls back to back would overlap in the out-of-order core (by
/// 5% at 1 us here) and run faster than their length.
std::uint64_t chain = 1;
std::uint64_t spin(std::uint64_t iterations) {
  std::uint64_t x = chain;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  chain = x;
  return x;
}

/// Spin iterations that last about 1 ms.
std::uint64_t millisecond_iterations() {
  std::uint64_t iterations = 1000;
  for (auto t0 = steady::now(); (benchmark::DoNotOptimize(spin(iterations)), seconds_since(t0)) < 1e-3; t0 = steady::now())
    iterations *= 2;
  return iterations;
}

/// Seconds per spin iteration now: the median of `runs` timed runs of about 1 ms.
double seconds_per_iteration(int runs = 200) {
  static const std::uint64_t iterations = millisecond_iterations();
  std::vector<double> per_iteration;
  for (int run = 0; run < runs; ++run) {
    const auto t0 = steady::now();
    benchmark::DoNotOptimize(spin(iterations));
    per_iteration.push_back(seconds_since(t0) / static_cast<double>(iterations));
  }
  return opval::summarize(per_iteration).median;
}

std::uint64_t iterations_for(double seconds, double per_iteration) {
  return static_cast<std::uint64_t>(std::llround(seconds / per_iteration));
}

// ---------------------------------------------------------------- accuracy and overhead

/// Five runs per length, each between two calibrations of the spin (50 runs of 1 ms before and
/// after): its truth is the mean of the two, so that a change of the machine's load between the
/// calibration and the sampling does not count as the sampler's error.
void accuracy(double per_iteration) {
  fmt::print("accuracy: opval's sampler (defaults) on a spin of known length, 5 runs each (median error)\n");
  fmt::print("{:>10} {:>14} {:>9} {:>22} {:>7} {:>8} {:>11}  {}\n", "length", "opval median", "error",
             "errors of the 5 runs", "batch", "samples", "rule", "verdict");
  for (double length : {1e-6, 10e-6, 1e-3}) {
    const std::uint64_t n = iterations_for(length, per_iteration);
    std::vector<double> errors, medians, rule;
    opval::sampling_result r;
    for (int run = 0; run < 5; ++run) {
      const double before = seconds_per_iteration(50);
      r = opval::sample([n] { benchmark::DoNotOptimize(spin(n)); }, {});
      const double truth = static_cast<double>(n) * (before + seconds_per_iteration(50)) / 2;
      errors.push_back(r.summary.median / truth - 1);
      medians.push_back(r.summary.median);
      rule.push_back(r.rule_seconds);
    }
    const double error = opval::summarize(errors).median;
    std::string each;
    for (double e : errors) each += fmt::format("{:+.1f} ", 100 * e);
    fmt::print("{:>10} {:>11.4f} us {:>+8.2f}% {:>22} {:>7} {:>8} {:>8.2f} ms  {}\n", fmt::format("{:g} us", length * 1e6),
               opval::summarize(medians).median * 1e6, 100 * error, each, r.batch, r.samples.size(),
               opval::summarize(rule).median * 1e3, std::fabs(error) <= 0.02 ? "within 2%" : "MISSES 2%");
  }
}

/// The harness's own time per sample: the sampler on an empty kernel, one call per sample and
/// 100000 samples (no target can stop it), less the stopping rule, which runs between samples
/// (the accuracy table gives its time per figure); and what an empty sample reads (the clock's
/// cost within each sample, which batching keeps under 1% of a sample).
void overhead() {
  fmt::print("\noverhead: the sampler on an empty kernel, 100000 samples of one call (median of 5 runs)\n");
  opval::sampling_options o;
  o.target_ci = 1e-12;
  o.max_samples = 100000;
  o.min_sample_seconds = 1e-12;  // one call per sample
  o.budget_seconds = 60;
  std::vector<double> per_sample, empty_sample;
  for (int run = 0; run < 5; ++run) {
    const opval::sampling_result r = opval::sample([] {}, {}, o);
    per_sample.push_back((r.sampling_seconds - r.rule_seconds) / static_cast<double>(r.samples.size()));
    empty_sample.push_back(r.summary.median);
  }
  const double ns = opval::summarize(per_sample).median * 1e9;
  fmt::print("harness time per sample: {:.1f} ns ({}); an empty sample reads {:.1f} ns\n", ns,
             ns <= 100 ? "within 100 ns" : "OVER 100 ns", opval::summarize(empty_sample).median * 1e9);
}

// ---------------------------------------------------------------- one invocation

/// Google Benchmark's aggregate "median" (of its repetitions' means), in seconds.
class median_catcher : public benchmark::BenchmarkReporter {
 public:
  double median = 0;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs)
      if (run.aggregate_name == "median") median = run.GetAdjustedRealTime() * 1e-9;
  }
};

/// One invocation of a tool on a spin of `iterations`, as a JSON line: its median, its wall
/// time to that figure, and (opval) its warnings.
void invoke(const std::string& tool, std::uint64_t iterations, double min_time) {
  nlohmann::json out{{"tool", tool}};
  const auto t0 = steady::now();
  if (tool == "opval") {
    opval::sampling_options o;
    if (min_time >= 0) o.min_sampling_seconds = min_time;
    const opval::sampling_result r = opval::sample([iterations] { benchmark::DoNotOptimize(spin(iterations)); }, {}, o);
    out["wall"] = seconds_since(t0);
    out["median"] = r.summary.median;
    out["warnings"] = r.warnings;
    out["samples"] = r.samples.size();
    out["converged"] = r.converged;
  } else if (tool == "gbench") {
    benchmark::RegisterBenchmark("spin", [iterations](benchmark::State& state) {
      for (auto _ : state) benchmark::DoNotOptimize(spin(iterations));
    })->Unit(benchmark::kNanosecond)->Repetitions(10);
    median_catcher catcher;
    benchmark::RunSpecifiedBenchmarks(&catcher);
    out["wall"] = seconds_since(t0);
    out["median"] = catcher.median;
  } else {
    throw std::runtime_error("unknown tool '" + tool + "' (opval or gbench)");
  }
  fmt::print("{}\n", out.dump());
}

// ---------------------------------------------------------------- repeatability and time

nlohmann::json run_invocation(const std::string& self, const std::string& tool, std::uint64_t iterations,
                              double min_time) {
  const std::string command = fmt::format("'{}' invoke {} {} {}", self, tool, iterations, min_time);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + command);
  std::string text;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) text += buffer;
  if (::pclose(pipe) != 0) throw std::runtime_error(command + " failed: " + text);
  return nlohmann::json::parse(text);
}

double relative_sd(const std::vector<double>& x) {
  const opval::sample_summary s = opval::summarize(x);
  return s.stdev / s.mean;
}

/// The 95% percentile-bootstrap interval of relative_sd(a) / relative_sd(b), invocations
/// resampled independently (each invocation is its own process).
std::pair<double, double> spread_ratio_ci(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ratios;
  const auto resample = [](const std::vector<double>& x, std::uint64_t stream) {
    std::vector<double> out;
    for (std::size_t i = 0; i < x.size(); ++i)
      out.push_back(x[std::min(x.size() - 1, static_cast<std::size_t>(opval::random_uniform(3, stream, i) * x.size()))]);
    return out;
  };
  for (std::uint64_t r = 0; r < 4000; ++r) {
    const double sb = relative_sd(resample(b, 2 * r + 1));
    if (sb > 0) ratios.push_back(relative_sd(resample(a, 2 * r)) / sb);
  }
  std::sort(ratios.begin(), ratios.end());
  return {opval::quantile_of_sorted(ratios, 0.025), opval::quantile_of_sorted(ratios, 0.975)};
}

void repeatability(const std::string& self, double per_iteration, int invocations, double min_time) {
  const std::uint64_t iterations = iterations_for(50e-6, per_iteration);
  fmt::print("\nrepeatability and time: {} interleaved invocations each on a 50 us spin ({} iterations, {:.2f} us);"
             " opval's minimum sampling time {}\n",
             invocations, iterations, static_cast<double>(iterations) * per_iteration * 1e6,
             min_time >= 0 ? fmt::format("{:g} s", min_time) : std::string("its default"));
  std::vector<nlohmann::json> ours, theirs;
  for (int i = 0; i < invocations; ++i) {
    ours.push_back(run_invocation(self, "opval", iterations, min_time));
    theirs.push_back(run_invocation(self, "gbench", iterations, min_time));
  }
  std::vector<double> our_medians, their_medians, our_walls, their_walls;
  for (const auto& j : ours) our_medians.push_back(j["median"]), our_walls.push_back(j["wall"]);
  for (const auto& j : theirs) their_medians.push_back(j["median"]), their_walls.push_back(j["wall"]);
  const double pooled = opval::summarize(our_medians).median;
  fmt::print("{:>3} {:>14} {:>9} {:>8} {:>9}  {:>14} {:>8}  {}\n", "#", "opval median", "off", "wall", "samples",
             "gbench median", "wall", "opval warnings");
  int off_by_5 = 0, off_and_warned = 0;
  for (int i = 0; i < invocations; ++i) {
    const double off = our_medians[i] / pooled - 1;
    const auto& warnings = ours[i]["warnings"];
    if (std::fabs(off) > 0.05) ++off_by_5, off_and_warned += !warnings.empty();
    fmt::print("{:>3} {:>11.3f} us {:>+8.2f}% {:>6.2f} s {:>9}  {:>11.3f} us {:>6.2f} s  {}\n", i + 1,
               our_medians[i] * 1e6, 100 * off, our_walls[i], ours[i]["samples"].get<std::size_t>(),
               their_medians[i] * 1e6, their_walls[i], warnings.empty() ? "-" : warnings.dump());
  }
  const double spread_ours = relative_sd(our_medians), spread_theirs = relative_sd(their_medians);
  const auto [low, high] = spread_ratio_ci(our_medians, their_medians);
  fmt::print("spread of the medians (sd / mean): opval {:.2f}%, Google Benchmark {:.2f}%; ratio {:.2f}, 95% CI [{:.2f}, {:.2f}]\n",
             100 * spread_ours, 100 * spread_theirs, spread_ours / spread_theirs, low, high);
  fmt::print("opval medians more than 5% off the pooled median: {}, of them with a warning: {}\n", off_by_5,
             off_and_warned);
  const double wall_ours = opval::summarize(our_walls).median, wall_theirs = opval::summarize(their_walls).median;
  fmt::print("median wall time to the figure: opval {:.3f} s, Google Benchmark {:.3f} s (ratio {:.3f})\n", wall_ours,
             wall_theirs, wall_ours / wall_theirs);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "all";
    if (mode == "invoke") {
      if (argc != 5) throw std::runtime_error("usage: invoke opval|gbench ITERATIONS MIN_TIME");
      invoke(argv[2], std::stoull(argv[3]), std::stod(argv[4]));
      return 0;
    }
    int invocations = 10;
    double min_time = -1;  // opval's default
    for (int i = 2; i + 1 < argc; i += 2) {
      if (std::strcmp(argv[i], "--invocations") == 0) invocations = std::stoi(argv[i + 1]);
      else if (std::strcmp(argv[i], "--min-time") == 0) min_time = std::stod(argv[i + 1]);
      else throw std::runtime_error(std::string("unknown option ") + argv[i]);
    }
    const double per_iteration = seconds_per_iteration();
    fmt::print("spin: {:.4f} ns per iteration (median of 200 runs of about 1 ms)\n\n", per_iteration * 1e9);
    if (mode == "all" || mode == "accuracy") accuracy(per_iteration);
    if (mode == "all" || mode == "overhead") overhead();
    if (mode == "all" || mode == "repeatability") repeatability(std::filesystem::read_symlink("/proc/self/exe").string(), per_iteration, invocations, min_time);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_timing_figures: {}\n", e.what());
    return 1;
  }
}
