// The machine's peaks and the roofline: the measurement's shape on this machine (every FMA type
// the CPU has, each cache level and DRAM, one thread and all), the cache file's round trip and
// its refusals (missing, corrupt, another machine's), and the placement of results on a
// synthetic roofline (compute or memory bound, the level holding the working set, cold caches,
// thread interpolation, a type's fallback); the hierarchy check fed impossible figures (those a
// loaded machine measured): named, measured again a bounded number of times, refused unsaved.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "opval/error.hpp"
#include "bench/machine_peaks.hpp"
#include "bench/roofline.hpp"

namespace opval {
namespace {

namespace fs = std::filesystem;

peak_options quick() {
  peak_options o;
  o.seconds = 0.02;
  o.array_bytes = 8 << 20;
  o.passes = 2;
  o.stream_seconds = 0.002;
  return o;
}

TEST(machine_peaks, measures_every_fma_type_and_every_level) {
  const machine_peaks p = measure_machine_peaks(quick());
  EXPECT_FALSE(p.isa.empty());
  EXPECT_EQ(p.logical_cpus, capture_environment().logical_cpus);
  for (const char* type : {"f32", "f64"}) {
    ASSERT_TRUE(p.gflops.contains(type)) << type;
    EXPECT_GT(p.gflops.at(type).one, 0.5) << type << ": even a scalar FMA loop does more";
    EXPECT_GT(p.gflops.at(type).all, 0.5) << type;
  }
  if (p.isa.find("+bf16") != std::string::npos) EXPECT_TRUE(p.gflops.contains("bf16"));
  ASSERT_FALSE(p.levels.empty());
  EXPECT_EQ(p.dram().name, "DRAM");
  EXPECT_EQ(p.dram().bytes_per_cpu, 0u);
  EXPECT_EQ(p.stream_array_bytes, std::size_t{8} << 20);
  for (const memory_level& level : p.levels) {
    EXPECT_GT(level.triad_gbs.one, 0.05) << level.name;
    EXPECT_GT(level.copy_gbs.one, 0.05) << level.name;
    if (level.name != "DRAM") EXPECT_GT(level.bytes_per_cpu, 0u) << level.name;
  }
  EXPECT_THROW(measure_machine_peaks({.seconds = 0}), error);
}

machine_peaks synthetic() {
  machine_peaks p;
  p.cpu_model = "Test CPU";
  p.kernel = "Linux 1.0";
  p.logical_cpus = 2;
  p.threads = 2;
  p.isa = "avx512";
  p.measured_at = "2026-01-01T00:00:00Z";
  p.gflops = {{"f32", {100, 180}}, {"f64", {50, 90}}, {"int8", {400, 700}}};
  p.levels = {{"L2", 1 << 20, {40, 70}, {50, 90}}, {"L3", 10 << 20, {15, 25}, {20, 30}}, {"DRAM", 0, {8, 9}, {10, 12}}};
  p.stream_array_bytes = 64 << 20;
  return p;
}

TEST(machine_peaks, the_cache_file_round_trips_and_refuses_what_it_cannot_trust) {
  const fs::path dir = fs::temp_directory_path() / ("opval_peaks_" + std::to_string(::getpid()));
  const std::string file = (dir / "sub" / "machine.json").string();
  const machine_peaks p = synthetic();
  save_machine_peaks(p, file);
  environment here;
  here.cpu_model = p.cpu_model, here.kernel = p.kernel, here.logical_cpus = p.logical_cpus;
  std::string why;
  const std::optional<machine_peaks> back = load_machine_peaks(file, here, why);
  ASSERT_TRUE(back.has_value()) << why;
  EXPECT_EQ(back->gflops.at("f32").all, 180);
  ASSERT_EQ(back->levels.size(), 3u);
  EXPECT_EQ(back->levels[1].name, "L3");
  EXPECT_EQ(back->levels[1].bytes_per_cpu, 10u << 20);
  EXPECT_EQ(back->dram().triad_gbs.all, 12);
  EXPECT_EQ(back->measured_at, p.measured_at);

  environment elsewhere = here;
  elsewhere.logical_cpus = 64;
  EXPECT_FALSE(load_machine_peaks(file, elsewhere, why));
  EXPECT_NE(why.find("another machine (Test CPU, 2 CPUs, Linux 1.0)"), std::string::npos) << why;
  EXPECT_FALSE(load_machine_peaks((dir / "none.json").string(), here, why));
  EXPECT_NE(why.find("no machine peaks in"), std::string::npos) << why;
  std::ofstream(dir / "corrupt.json") << "{\"schema\": \"opval-machine\", \"cpu";
  EXPECT_FALSE(load_machine_peaks((dir / "corrupt.json").string(), here, why));
  EXPECT_NE(why.find("cannot be read"), std::string::npos) << why;
  fs::remove_all(dir);
}

TEST(machine_peaks, a_consistent_hierarchy_has_no_problems_and_a_small_shortfall_is_tolerated) {
  machine_peaks p = synthetic();
  EXPECT_TRUE(hierarchy_problems(p, 0.1).empty());
  p.levels[2].triad_gbs = {10, 9.5};  // DRAM saturated: two threads 5% below one, within 10%
  EXPECT_TRUE(hierarchy_problems(p, 0.1).empty());
  ASSERT_EQ(hierarchy_problems(p, 0.01).size(), 1u);
  EXPECT_EQ(hierarchy_problems(p, 0.01)[0], "DRAM triad: 9.5 GB/s on 2 threads, below 10 GB/s on one thread");
}

// The figures of the issue: `bench --machine` on a loaded machine saved a 2-thread L2 copy of
// 0.26 GB/s against 69 GB/s on one thread.
machine_peaks loaded() {
  machine_peaks p = synthetic();
  p.levels[0].copy_gbs = {69, 0.26};
  p.levels[1].triad_gbs = {5, 30};  // L3 below DRAM's 10 GB/s on one thread
  p.gflops["f32"] = {100, 60};
  return p;
}

TEST(machine_peaks, an_impossible_hierarchy_is_named_figure_by_figure) {
  const std::vector<std::string> expected = {
      "f32 FMA: 60 GFLOP/s on 2 threads, below 100 GFLOP/s on one thread",
      "L2 copy: 0.26 GB/s on 2 threads, below 69 GB/s on one thread",
      "L2 copy: 0.26 GB/s on 2 threads, below L3's 25 GB/s",
      "L3 triad: 5 GB/s on one thread, below DRAM's 10 GB/s"};
  EXPECT_EQ(hierarchy_problems(loaded(), 0.1), expected);
}

TEST(machine_peaks, a_failed_check_measures_again_and_keeps_each_best_figure) {
  std::vector<machine_peaks> given = {loaded(), synthetic()};
  int calls = 0;
  const checked_peaks c = measure_checked_peaks({}, [&] { return given.at(calls++); });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(c.attempts, 2);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.peaks.levels[0].copy_gbs.one, 69) << "the best of the two measurements";
  EXPECT_EQ(c.peaks.levels[0].copy_gbs.all, 70);
  // Consistent at once: measured once only.
  calls = 0;
  given = {synthetic(), loaded()};
  EXPECT_EQ(measure_checked_peaks({}, [&] { return given.at(calls++); }).attempts, 1);
  EXPECT_EQ(calls, 1);
}

TEST(machine_peaks, a_hierarchy_that_stays_impossible_is_refused_after_the_last_attempt) {
  int calls = 0;
  peak_options o;
  o.attempts = 4;
  const checked_peaks c = measure_checked_peaks(o, [&] { return ++calls, loaded(); });
  EXPECT_EQ(calls, 4) << "bounded: never more than o.attempts";
  EXPECT_EQ(c.problems, hierarchy_problems(loaded(), o.tolerance));
  EXPECT_THROW(measure_checked_peaks({.attempts = 0}, [] { return synthetic(); }), error);

  // `opval bench --machine` says why and leaves the file as it was.
  const fs::path dir = fs::temp_directory_path() / ("opval_refused_" + std::to_string(::getpid()));
  const std::string file = (dir / "machine.json").string();
  save_machine_peaks(synthetic(), file);
  const std::string before = (std::ostringstream() << std::ifstream(file).rdbuf()).str();
  std::ostringstream out;
  EXPECT_FALSE(measure_and_save_peaks(o, file, out, [] { return loaded(); }));
  const std::string text = out.str();
  EXPECT_NE(text.find("measuring again (4 of 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("not saved: after 4 measurements the figures are not a consistent hierarchy (tolerance 10%):\n"
                      "  f32 FMA: 60 GFLOP/s on 2 threads"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("measure again on a quiet machine; " + file + " is unchanged"), std::string::npos) << text;
  EXPECT_EQ((std::ostringstream() << std::ifstream(file).rdbuf()).str(), before);
  // Figures that pass are saved.
  std::ostringstream saved;
  EXPECT_TRUE(measure_and_save_peaks(o, (dir / "new.json").string(), saved, [] { return synthetic(); }));
  EXPECT_NE(saved.str().find("saved to "), std::string::npos) << saved.str();
  EXPECT_TRUE(fs::exists(dir / "new.json"));
  fs::remove_all(dir);
}

TEST(machine_peaks, a_saved_impossible_hierarchy_is_not_used) {
  const fs::path dir = fs::temp_directory_path() / ("opval_impossible_" + std::to_string(::getpid()));
  const std::string file = (dir / "machine.json").string();
  save_machine_peaks(loaded(), file);  // as a version before the check saved it
  environment here;
  here.cpu_model = "Test CPU", here.kernel = "Linux 1.0", here.logical_cpus = 2;
  std::string why;
  EXPECT_FALSE(load_machine_peaks(file, here, why));
  EXPECT_NE(why.find("are not a consistent hierarchy (f32 FMA: 60 GFLOP/s on 2 threads, below 100 GFLOP/s on one "
                     "thread; L2 copy"),
            std::string::npos)
      << why;
  fs::remove_all(dir);
}

TEST(roofline, results_are_placed_under_the_right_roof) {
  const machine_peaks p = synthetic();
  // High intensity: under the compute roof, 50 of 100 GFLOP/s on one thread.
  roofline_place r = place_on_roofline(p, dtype::f32, 1, 50, 1, 100, 1e9, false);
  EXPECT_EQ(r.bound, "compute");
  EXPECT_EQ(r.peak_gflops, 100);
  EXPECT_DOUBLE_EQ(r.percent_of_roof, 50);
  // Low intensity, a working set beyond L3: DRAM's roof, 0.25 x 10 GB/s.
  r = place_on_roofline(p, dtype::f32, 1, 2, 8, 0.25, 100 << 20, false);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_EQ(r.memory_level, "DRAM");
  EXPECT_DOUBLE_EQ(r.attainable_gflops, 2.5);
  EXPECT_DOUBLE_EQ(r.percent_of_roof, 80);
  EXPECT_DOUBLE_EQ(r.percent_of_bandwidth, 80);
  // The same in L2 while hot, and in DRAM when the caches are flushed.
  EXPECT_EQ(place_on_roofline(p, dtype::f32, 1, 2, 8, 0.25, 512 << 10, false).memory_level, "L2");
  EXPECT_EQ(place_on_roofline(p, dtype::f32, 1, 2, 8, 0.25, 5 << 20, false).memory_level, "L3");
  EXPECT_EQ(place_on_roofline(p, dtype::f32, 1, 2, 8, 0.25, 512 << 10, true).memory_level, "DRAM");
  // Two threads: twice the one-thread figures, capped at all threads' (L2: 2 x 50 > 90).
  r = place_on_roofline(p, dtype::f32, 2, 2, 8, 0.25, 1536 << 10, false);
  EXPECT_EQ(r.memory_level, "L2") << "1.5 MiB fits two CPUs' L2";
  EXPECT_EQ(r.bandwidth_gbs, 90);
  EXPECT_EQ(place_on_roofline(p, dtype::f64, 2, 1, 1, 100, 1, false).peak_gflops, 90);
  // Types: tf32 and fp8 multiply in f32 on a CPU; bf16 has no peak here and falls back to f32.
  EXPECT_EQ(peak_type_for(dtype::tf32, p), "f32");
  EXPECT_EQ(peak_type_for(dtype::f8_e4m3, p), "f32");
  EXPECT_EQ(peak_type_for(dtype::bf16, p), "f32");
  EXPECT_EQ(peak_type_for(dtype::i8, p), "int8");
  EXPECT_EQ(peak_type_for(dtype::f64, p), "f64");
}

}  // namespace
}  // namespace opval
