#include "bench/machine_peaks.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bench/cache_flush.hpp"
#include "opval/error.hpp"
#include "core/threading.hpp"

namespace opval {
namespace {

constexpr int chains = 12;  // FMA latency (4 cycles) x 2 ports = 8 in flight, and some to spare

// The vector kernels live in `#pragma GCC target` regions, which GCC has and clang has not
// (clang compiles opval only for the fuzz targets, which measure no peaks): a build by another
// compiler measures the scalar loop, and says so in `isa`.
#if defined(__GNUC__) && !defined(__clang__)
#define OPVAL_VECTOR_PEAKS 1
// One namespace per instruction set: each holds run_chains compiled for its registers and the
// kernels of the types it has. A kernel runs `iterations` steps of every chain.
namespace avx512 {
#pragma GCC push_options
#pragma GCC target("avx512f")
#include "fma_chains.inc"
unsigned f64(std::uint64_t n) {
  const __m512d h = _mm512_set1_pd(0.5);  // x -> x/2 + 1/2 stays near 1: no denormal, no overflow
  return run_chains(n, h, [h](__m512d x) { return _mm512_fmadd_pd(x, h, h); });
}
unsigned f32(std::uint64_t n) {
  const __m512 h = _mm512_set1_ps(0.5f);
  return run_chains(n, h, [h](__m512 x) { return _mm512_fmadd_ps(x, h, h); });
}
#pragma GCC pop_options
}  // namespace avx512

namespace avx512_bf16 {
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bf16")
#include "fma_chains.inc"
unsigned bf16(std::uint64_t n) {
  const __m512bh h = (__m512bh)_mm512_set1_epi16(0x3f00);  // bf16 0.5
  return run_chains(n, _mm512_setzero_ps(), [h](__m512 x) { return _mm512_dpbf16_ps(x, h, h); });
}
#pragma GCC pop_options
}  // namespace avx512_bf16

namespace avx512_fp16 {
#pragma GCC push_options
#pragma GCC target("avx512f,avx512fp16")
#include "fma_chains.inc"
unsigned f16(std::uint64_t n) {
  const __m512h h = _mm512_set1_ph(static_cast<_Float16>(0.5f));
  return run_chains(n, h, [h](__m512h x) { return _mm512_fmadd_ph(x, h, h); });
}
#pragma GCC pop_options
}  // namespace avx512_fp16

namespace avx512_vnni {
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vnni")
#include "fma_chains.inc"
unsigned int8(std::uint64_t n) {
  const __m512i one = _mm512_set1_epi8(1);
  return run_chains(n, _mm512_setzero_si512(), [one](__m512i x) { return _mm512_dpbusd_epi32(x, one, one); });
}
#pragma GCC pop_options
}  // namespace avx512_vnni

namespace avx2 {
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "fma_chains.inc"
unsigned f64(std::uint64_t n) {
  const __m256d h = _mm256_set1_pd(0.5);
  return run_chains(n, h, [h](__m256d x) { return _mm256_fmadd_pd(x, h, h); });
}
unsigned f32(std::uint64_t n) {
  const __m256 h = _mm256_set1_ps(0.5f);
  return run_chains(n, h, [h](__m256 x) { return _mm256_fmadd_ps(x, h, h); });
}
#pragma GCC pop_options
}  // namespace avx2

#endif  // OPVAL_VECTOR_PEAKS

namespace scalar {
#include "fma_chains.inc"
unsigned f64(std::uint64_t n) { return run_chains(n, 0.5, [](double x) { return std::fma(x, 0.5, 0.5); }); }
unsigned f32(std::uint64_t n) { return run_chains(n, 0.5f, [](float x) { return std::fma(x, 0.5f, 0.5f); }); }
}  // namespace scalar

/// A peak kernel: its steps' work (flops, or int8 ops) per chain step.
struct fma_kernel {
  std::string type;
  unsigned (*run)(std::uint64_t);
  double flops_per_step;
};

/// The kernels of the widest instruction set this CPU has, and its name.
std::vector<fma_kernel> kernels_for_this_cpu(std::string& isa) {
  std::vector<fma_kernel> k;
#ifdef OPVAL_VECTOR_PEAKS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    isa = "avx512";
    k = {{"f64", avx512::f64, 8 * 2}, {"f32", avx512::f32, 16 * 2}};
    if (__builtin_cpu_supports("avx512bf16")) k.push_back({"bf16", avx512_bf16::bf16, 32 * 2}), isa += "+bf16";
    if (__builtin_cpu_supports("avx512fp16")) k.push_back({"f16", avx512_fp16::f16, 32 * 2}), isa += "+fp16";
    if (__builtin_cpu_supports("avx512vnni")) k.push_back({"int8", avx512_vnni::int8, 64 * 2}), isa += "+vnni";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    isa = "avx2";
    k = {{"f64", avx2::f64, 4 * 2}, {"f32", avx2::f32, 8 * 2}};
  } else
#endif
  {
    isa = "scalar";
#ifndef OPVAL_VECTOR_PEAKS
    isa += " (a build without GCC's target pragmas)";
#endif
    k = {{"f64", scalar::f64, 2}, {"f32", scalar::f32, 2}};
  }
  return k;
}

using steady = std::chrono::steady_clock;

/// Seconds `work` takes on `threads` OpenMP threads at once (each doing all of it).
double parallel_seconds(int threads, const std::function<void()>& work) {
  const auto t0 = steady::now();
#pragma omp parallel num_threads(threads)
  work();
  return std::chrono::duration<double>(steady::now() - t0).count();
}

volatile unsigned sink;  // the kernels' results land here: their work is never dead

/// GFLOP/s of `k` on `threads`: steps per thread calibrated to o.seconds on one thread, the
/// best of 3 runs.
double fma_gflops(const fma_kernel& k, int threads, std::uint64_t steps) {
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const double s = parallel_seconds(threads, [&] { sink = k.run(steps); });
    best = std::max(best, static_cast<double>(threads) * static_cast<double>(steps) * chains * k.flops_per_step / s / 1e9);
  }
  return best;
}

std::uint64_t calibrate_steps(const fma_kernel& k, double seconds) {
  std::uint64_t steps = 1000;
  for (;;) {
    const double s = parallel_seconds(1, [&] { sink = k.run(steps); });
    if (s >= seconds / 4) return static_cast<std::uint64_t>(static_cast<double>(steps) * seconds / s) + 1;
    steps *= 4;
  }
}

/// [begin, end) of thread `t`'s share of n elements among `threads`.
std::pair<std::size_t, std::size_t> slice(std::size_t n, int t, int threads) {
  const auto share = [&](int k) { return n * static_cast<std::size_t>(k) / static_cast<std::size_t>(threads); };
  return {share(t), share(t + 1)};
}

/// Seconds of `repeats` sweeps of `sweep(begin, end)` over each thread's slice (the slices stay
/// in the thread's own caches; one parallel region, so that small arrays are not timed against
/// OpenMP's fork and join).
template <class Sweep>
double timed_sweeps(std::size_t n, int threads, std::uint64_t repeats, Sweep sweep) {
  const auto t0 = steady::now();
#pragma omp parallel num_threads(threads)
  {
    const auto [begin, end] = slice(n, omp_get_thread_num(), threads);
    for (std::uint64_t r = 0; r < repeats; ++r) {
      sweep(begin, end);
      asm volatile("" ::: "memory");  // each sweep reads and writes memory anew
    }
  }
  return std::chrono::duration<double>(steady::now() - t0).count();
}

/// Sweeps per pass, grown until a pass of `sweep` lasts `seconds`. Not from one sweep's time:
/// that includes waking the team's threads, which on a loaded machine waits for a CPU (ms),
/// so that L2's passes would time the wake-up, not the cache (0.8 GB/s on 2 threads here).
template <class Sweep>
std::uint64_t calibrate_repeats(std::size_t n, int threads, double seconds, Sweep sweep) {
  std::uint64_t repeats = 1;
  for (;;) {
    const double s = timed_sweeps(n, threads, repeats, sweep);
    if (s >= seconds || repeats >= 10'000'000) return repeats;
    repeats = static_cast<std::uint64_t>(static_cast<double>(repeats) * std::clamp(1.2 * seconds / s, 2.0, 10.0));
  }
}

/// STREAM's copy and triad on arrays of `bytes` each, in GB/s: the best of `passes`, each
/// repeating the sweep until it lasts o.stream_seconds.
std::pair<double, double> stream(std::size_t bytes, int threads, const peak_options& o) {
  const std::size_t n = std::max<std::size_t>(bytes / sizeof(double), 64 * static_cast<std::size_t>(threads));
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  double* pa = a.get();
  double* pb = b.get();
  double* pc = c.get();
  const double s = 3;
  const auto copy = [=](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) pa[i] = pb[i];
  };
  const auto triad = [=](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) pa[i] = pb[i] + s * pc[i];
  };
  timed_sweeps(n, threads, 1, [=](std::size_t begin, std::size_t end) {  // first touch by the thread that sweeps
    for (std::size_t i = begin; i < end; ++i) pa[i] = 0, pb[i] = 1, pc[i] = 2;
  });
  const std::uint64_t repeats = calibrate_repeats(n, threads, o.stream_seconds, triad);
  double best_copy = 0, best_triad = 0;
  const double moved = static_cast<double>(n * sizeof(double) * repeats) / 1e9;
  for (int pass = 0; pass < o.passes; ++pass) {
    best_copy = std::max(best_copy, 2 * moved / timed_sweeps(n, threads, repeats, copy));
    best_triad = std::max(best_triad, 3 * moved / timed_sweeps(n, threads, repeats, triad));
  }
  sink = static_cast<unsigned>(pa[n / 2]);
  return {best_copy, best_triad};
}

/// The cache levels from L2 outwards (data or unified), each with its capacity per CPU.
std::vector<memory_level> cache_levels() {
  std::vector<memory_level> levels;
  for (const cache_info& c : cpu0_caches()) {
    if (c.level < 2 || c.type == "Instruction" || c.bytes == 0) continue;
    std::size_t sharing = 1;
    try {
      sharing = std::max<std::size_t>(1, parse_cpu_list(c.shared_cpus).size());
    } catch (const error&) {
    }
    levels.push_back({fmt::format("L{}", c.level), c.bytes / sharing, {}, {}});
  }
  return levels;
}

std::size_t dram_array_bytes(const peak_options& o) {
  if (o.array_bytes) return o.array_bytes;
  return std::max<std::size_t>(4 * last_level_cache_bytes(), std::size_t{64} << 20);
}

/// Measures `level` on one thread and on `threads`: arrays that fill half its capacity (a
/// cache) but at most 8 x the capacity of the level below (`below`, 0: none), since a VM may
/// report its host's whole cache (300 MiB of L3 here) and arrays that size would measure DRAM;
/// or `dram_bytes` each (DRAM).
void measure_level(memory_level& level, std::uint64_t below, int threads, std::size_t dram_bytes, const peak_options& o) {
  const auto array_bytes = [&](int t) {
    if (!level.bytes_per_cpu) return dram_bytes;
    const std::uint64_t per_cpu = below ? std::min(level.bytes_per_cpu / 2, 8 * below) : level.bytes_per_cpu / 2;
    return static_cast<std::size_t>(per_cpu * static_cast<std::uint64_t>(t) / 3);
  };
  const auto [copy_one, triad_one] = stream(array_bytes(1), 1, o);
  const auto [copy_all, triad_all] = stream(array_bytes(threads), threads, o);
  level.copy_gbs = {copy_one, copy_all};
  level.triad_gbs = {triad_one, triad_all};
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

using json = nlohmann::ordered_json;

/// Whether `figure` is below `floor` by more than the fraction `tolerance`.
bool falls_short(double figure, double floor, double tolerance) { return figure < floor * (1 - tolerance); }

void keep_best(per_threads& best, const per_threads& p) {
  best.one = std::max(best.one, p.one);
  best.all = std::max(best.all, p.all);
}

/// Each figure of `best` raised to `p`'s where that is higher (the same machine's levels, in order).
void keep_best(machine_peaks& best, const machine_peaks& p) {
  for (auto& [type, figure] : best.gflops)
    if (const auto it = p.gflops.find(type); it != p.gflops.end()) keep_best(figure, it->second);
  for (std::size_t i = 0; i < best.levels.size() && i < p.levels.size(); ++i) {
    keep_best(best.levels[i].copy_gbs, p.levels[i].copy_gbs);
    keep_best(best.levels[i].triad_gbs, p.levels[i].triad_gbs);
  }
}

json to_json(const per_threads& p) { return json{{"one", p.one}, {"all", p.all}}; }
per_threads per_threads_from(const json& j) { return {j.at("one").get<double>(), j.at("all").get<double>()}; }

/// The figures as `opval bench --machine` shows them.
void print_peaks(const machine_peaks& p, std::ostream& out) {
  out << fmt::format("{}; {}; {} threads\n", p.measured_on(), p.isa, p.threads);
  out << fmt::format("{:<14} {:>12} {:>12}\n", "PEAK", "1 THREAD", fmt::format("{} THREADS", p.threads));
  for (const auto& [type, figure] : p.gflops)
    out << fmt::format("{:<14} {:>12.4g} {:>12.4g}  {}\n", type + " FMA", figure.one, figure.all,
                       type == "int8" ? "GOP/s" : "GFLOP/s");
  for (const memory_level& level : p.levels) {
    const std::string size = level.bytes_per_cpu ? fmt::format("{} KiB per CPU", level.bytes_per_cpu >> 10)
                                                 : fmt::format("arrays of {} MiB", p.stream_array_bytes >> 20);
    out << fmt::format("{:<14} {:>12.4g} {:>12.4g}  GB/s ({})\n", level.name + " copy", level.copy_gbs.one,
                       level.copy_gbs.all, size);
    out << fmt::format("{:<14} {:>12.4g} {:>12.4g}  GB/s\n", level.name + " triad", level.triad_gbs.one,
                       level.triad_gbs.all);
  }
}

/// Why the figures of `c` are refused, with the machine's load now: the likeliest cause.
void print_refusal(const checked_peaks& c, const peak_options& po, const std::string& file, std::ostream& out) {
  out << fmt::format("opval bench --machine: not saved: after {} measurement{} the figures are not a consistent "
                     "hierarchy (tolerance {:g}%):\n",
                     c.attempts, c.attempts == 1 ? "" : "s", 100 * po.tolerance);
  for (const std::string& problem : c.problems) out << "  " << problem << '\n';
  const environment now = capture_environment();
  const auto load = std::find_if(now.warnings.begin(), now.warnings.end(), is_load_warning);
  out << fmt::format("  {}: measure again on a quiet machine; {} is unchanged\n",
                     load != now.warnings.end() ? *load : "a loaded or throttled machine measures low", file);
}

}  // namespace

std::string machine_peaks::measured_on() const {
  return fmt::format("{}, {} CPUs, {}", cpu_model, logical_cpus, kernel);
}

machine_peaks measure_machine_peaks(const peak_options& o) {
  if (!(o.seconds > 0) || o.passes < 1) throw error("machine peaks: the run time and passes must be positive");
  const environment env = capture_environment();
  machine_peaks p;
  p.cpu_model = env.cpu_model;
  p.kernel = env.kernel;
  p.logical_cpus = env.logical_cpus;
  p.threads = omp_get_max_threads();
  p.measured_at = utc_now();
  for (const fma_kernel& k : kernels_for_this_cpu(p.isa)) {
    const std::uint64_t steps = calibrate_steps(k, o.seconds);
    p.gflops[k.type] = {fma_gflops(k, 1, steps), fma_gflops(k, p.threads, steps)};
  }
  p.stream_array_bytes = dram_array_bytes(o);
  p.levels = cache_levels();
  p.levels.push_back({"DRAM", 0, {}, {}});
  for (std::size_t i = 0; i < p.levels.size(); ++i)
    measure_level(p.levels[i], i > 0 ? p.levels[i - 1].bytes_per_cpu : 0, p.threads, p.stream_array_bytes, o);
  return p;
}

std::vector<std::string> hierarchy_problems(const machine_peaks& p, double tolerance) {
  std::vector<std::string> problems;
  const std::string all = fmt::format("on {} thread{}", p.threads, p.threads == 1 ? "" : "s");
  // More threads never do less: a shortfall is another process taking the CPUs.
  const auto threads_check = [&](const std::string& what, const per_threads& f, const std::string& unit) {
    if (falls_short(f.all, f.one, tolerance))
      problems.push_back(fmt::format("{}: {:.3g} {} {}, below {:.3g} {} on one thread", what, f.all, unit, all, f.one, unit));
  };
  for (const auto& [type, figure] : p.gflops) threads_check(type + " FMA", figure, type == "int8" ? "GOP/s" : "GFLOP/s");
  for (std::size_t i = 0; i < p.levels.size(); ++i) {
    const memory_level& level = p.levels[i];
    for (const auto& [kernel, member] : {std::pair{"copy", &memory_level::copy_gbs}, {"triad", &memory_level::triad_gbs}}) {
      const std::string what = level.name + " " + kernel;
      threads_check(what, level.*member, "GB/s");
      if (i + 1 == p.levels.size()) continue;
      // A level nearer the core is never slower than the one behind it, on one thread or on all.
      const memory_level& next = p.levels[i + 1];
      for (const auto& [where, side] : {std::pair{std::string("on one thread"), &per_threads::one}, {all, &per_threads::all}})
        if (falls_short(level.*member.*side, next.*member.*side, tolerance))
          problems.push_back(fmt::format("{}: {:.3g} GB/s {}, below {}'s {:.3g} GB/s", what, level.*member.*side, where,
                                         next.name, next.*member.*side));
    }
  }
  return problems;
}

checked_peaks measure_checked_peaks(const peak_options& o, const std::function<machine_peaks()>& measure) {
  if (o.attempts < 1 || !(o.tolerance >= 0 && o.tolerance < 1))
    throw error("machine peaks: the attempts must be 1 or more and the tolerance in [0, 1)");
  checked_peaks c;
  for (c.attempts = 1;; ++c.attempts) {
    const machine_peaks p = measure();
    if (c.attempts == 1) c.peaks = p;
    else keep_best(c.peaks, p);
    c.problems = hierarchy_problems(c.peaks, o.tolerance);
    if (c.problems.empty() || c.attempts == o.attempts) return c;
  }
}

bool measure_and_save_peaks(const peak_options& o, const std::string& file, std::ostream& out,
                            const std::function<machine_peaks()>& measure) {
  int attempt = 0;
  const checked_peaks c = measure_checked_peaks(o, [&] {
    if (++attempt > 1)
      out << fmt::format("opval bench --machine: the figures are not a consistent hierarchy; measuring again ({} of "
                         "{})\n",
                         attempt, o.attempts)
          << std::flush;
    return measure();
  });
  print_peaks(c.peaks, out);
  if (!c.problems.empty()) {
    print_refusal(c, o, file, out);
    return false;
  }
  save_machine_peaks(c.peaks, file);
  out << "saved to " << file << '\n';
  return true;
}

std::string default_machine_file() {
  if (const char* file = std::getenv("OPVAL_MACHINE_FILE"); file && *file) return file;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) return std::string(cache) + "/opval/machine.json";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/opval/machine.json";
}

void check_writable(const std::string& path) {
  std::error_code ec;
  if (const auto folder = std::filesystem::path(path).parent_path(); !folder.empty())
    std::filesystem::create_directories(folder, ec);
  const bool existed = std::filesystem::exists(path, ec);
  if (std::filesystem::is_directory(path, ec) || !std::ofstream(path, std::ios::app))
    throw error("cannot write the machine peaks to '" + path + "'");
  if (!existed) std::filesystem::remove(path, ec);  // no empty file left behind if the measurement fails
}

void save_machine_peaks(const machine_peaks& p, const std::string& path) {
  json gflops = json::object();
  for (const auto& [type, figure] : p.gflops) gflops[type] = to_json(figure);
  json levels = json::array();
  for (const memory_level& l : p.levels)
    levels.push_back(json{{"name", l.name},
                          {"bytes_per_cpu", l.bytes_per_cpu},
                          {"copy_gbs", to_json(l.copy_gbs)},
                          {"triad_gbs", to_json(l.triad_gbs)}});
  const json j{{"schema", "opval-machine"}, {"schema_version", 1},  {"cpu_model", p.cpu_model},
               {"kernel", p.kernel},        {"logical_cpus", p.logical_cpus}, {"threads", p.threads},
               {"isa", p.isa},              {"measured_at", p.measured_at},   {"gflops", gflops},
               {"levels", levels},          {"stream_array_bytes", p.stream_array_bytes}};
  check_writable(path);
  std::ofstream out(path);
  if (!(out << j.dump(2) << '\n')) throw error("cannot write the machine peaks to '" + path + "'");
}

std::optional<machine_peaks> load_machine_peaks(const std::string& path, const environment& here, std::string& why) {
  std::ifstream in(path);
  if (!in) {
    why = "no machine peaks in " + path + " (opval bench --machine measures them)";
    return std::nullopt;
  }
  machine_peaks p;
  try {
    const json j = json::parse(in);
    if (j.at("schema") != "opval-machine") throw error("not an opval-machine file");
    p.cpu_model = j.at("cpu_model");
    p.kernel = j.at("kernel");
    p.logical_cpus = j.at("logical_cpus");
    p.threads = j.at("threads");
    p.isa = j.at("isa");
    p.measured_at = j.at("measured_at");
    for (const auto& [type, figure] : j.at("gflops").items()) p.gflops[type] = per_threads_from(figure);
    for (const json& l : j.at("levels"))
      p.levels.push_back({l.at("name"), l.at("bytes_per_cpu"), per_threads_from(l.at("copy_gbs")),
                          per_threads_from(l.at("triad_gbs"))});
    if (p.levels.empty() || p.levels.back().name != "DRAM") throw error("no DRAM level");
    p.stream_array_bytes = j.at("stream_array_bytes");
  } catch (const std::exception& e) {
    why = fmt::format("the machine peaks in {} cannot be read ({}): opval bench --machine measures them again", path,
                      e.what());
    return std::nullopt;
  }
  if (p.cpu_model != here.cpu_model || p.logical_cpus != here.logical_cpus || p.kernel != here.kernel) {
    why = fmt::format("the machine peaks in {} were measured on another machine ({}): opval bench --machine measures "
                      "this one's",
                      path, p.measured_on());
    return std::nullopt;
  }
  if (const std::vector<std::string> problems = hierarchy_problems(p, peak_options{}.tolerance); !problems.empty()) {
    why = fmt::format("the machine peaks in {} are not a consistent hierarchy ({}): opval bench --machine measures them "
                      "again",
                      path, fmt::join(problems, "; "));
    return std::nullopt;
  }
  return p;
}

}  // namespace opval
