// Sweeps: axes parse or are refused with the reason, points form the cartesian product (the
// first axis outermost) with zipped axes in step, templates take their placeholders' values,
// the scaling table computes speed-up and efficiency against the first thread count, and both
// tables give every axis its column.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "opval/error.hpp"
#include "bench/bench_report.hpp"
#include "bench/sweep.hpp"

namespace opval {
namespace {

std::string text_of(const sweep_point& p) {
  std::string s;
  for (const auto& [name, value] : p.values) s += name + "=" + value + " ";
  return s;
}

TEST(sweep, axes_parse_or_are_refused) {
  const sweep_axis a = parse_axis("n=64,128,256");
  EXPECT_EQ(a.name, "n");
  EXPECT_EQ(a.values, (std::vector<std::string>{"64", "128", "256"}));
  EXPECT_EQ(parse_axis("dt=bf16:f32:bf16").values.size(), 1u);
  for (const char* bad : {"n", "=1,2", "1n=2", "n=", "n=1,,2", "n=1,1", "n=a b", "n={1}"})
    EXPECT_THROW(parse_axis(bad), error) << bad;
}

TEST(sweep, points_are_a_cartesian_product_with_zipped_axes_in_step) {
  const std::vector<sweep_axis> axes = {parse_axis("m=1,2"), parse_axis("n=a,b,c"), parse_axis("k=x,y,z")};
  const std::vector<sweep_point> all = sweep_points(axes, {});
  ASSERT_EQ(all.size(), 18u);
  EXPECT_EQ(text_of(all[0]), "m=1 n=a k=x ");
  EXPECT_EQ(text_of(all[1]), "m=1 n=a k=y ");
  EXPECT_EQ(text_of(all[17]), "m=2 n=c k=z ");
  const std::vector<sweep_point> zipped = sweep_points(axes, {{"n", "k"}});
  ASSERT_EQ(zipped.size(), 6u);
  EXPECT_EQ(text_of(zipped[0]), "m=1 n=a k=x ");
  EXPECT_EQ(text_of(zipped[1]), "m=1 n=b k=y ");
  EXPECT_EQ(text_of(zipped[5]), "m=2 n=c k=z ");
  EXPECT_THROW(sweep_points(axes, {{"m", "n"}}), error) << "2 and 3 values cannot zip";
  EXPECT_THROW(sweep_points(axes, {{"n", "q"}}), error) << "no axis q";
  EXPECT_THROW(sweep_points(axes, {{"n"}}), error) << "a zip of one";
  EXPECT_THROW(sweep_points(axes, {{"n", "k"}, {"k", "n"}}), error) << "zipped twice";
  EXPECT_THROW(sweep_points({parse_axis("m=1"), parse_axis("m=2")}, {}), error) << "an axis twice";
}

TEST(sweep, templates_take_their_placeholders_values) {
  const sweep_point p{{{"n", "64"}, {"dt", "bf16"}, {"threads", "2"}}};
  EXPECT_EQ(placeholders("matmul m={n} n={n} k=16 dt={dt}"), (std::vector<std::string>{"n", "dt"}));
  EXPECT_EQ(instantiate("matmul m={n} n={n} k=16 dt={dt}", p), "matmul m=64 n=64 k=16 dt=bf16");
  EXPECT_EQ(instantiate("relu shape=8", p), "relu shape=8");
  EXPECT_THROW(instantiate("matmul m={q}", p), error);
  EXPECT_THROW(placeholders("matmul m={n"), error);
  EXPECT_THROW(placeholders("matmul m={9}"), error);
}

bench_result timed(double median, int threads, const std::string& backend = "sim") {
  bench_result r;
  r.timed = true;
  r.check.backend = backend;
  r.check.op = "matmul";
  r.check.descriptor = "matmul m=8 n=8 k=8";
  r.timing.summary.median = median;
  r.threads = threads;
  return r;
}

TEST(sweep, the_scaling_table_has_speedup_and_efficiency) {
  const std::vector<sweep_axis> axes = {parse_axis("n=8,16"), parse_axis("threads=1,4")};
  const std::vector<sweep_row> rows = {{{{{"n", "8"}, {"threads", "1"}}}, 0, timed(4e-3, 1)},
                                       {{{{"n", "8"}, {"threads", "4"}}}, 0, timed(2e-3, 4)},
                                       {{{{"n", "16"}, {"threads", "1"}}}, 0, timed(8e-3, 1)},
                                       {{{{"n", "16"}, {"threads", "4"}}}, 0, timed(2e-3, 4)}};
  std::ostringstream out;
  print_scaling_table(out, axes, rows);
  const std::string table = out.str();
  EXPECT_NE(table.find("SPEEDUP EFFICIENCY"), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\n +8 +4 sim +2ms .* 2 +50%\n)"))) << "n=8: 4 ms to 2 ms on 4 threads\n" << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\n *16 +4 sim +2ms .* 4 +100%\n)"))) << "n=16: 8 ms to 2 ms\n" << table;
}

// The issue's table: `--axis n=64,256 --axis threads=1,2` printed two identical-looking rows per
// size. Every axis has its column (a backend axis is the BACKEND column), as wide as its values.
TEST(sweep, the_case_table_has_a_column_for_every_axis) {
  const std::vector<sweep_axis> axes = {parse_axis("n=8,16"), parse_axis("threads=1,2"),
                                        parse_axis("dt=f32:f32:f32,bf16:f32:bf16"), parse_axis("backend=sim,onednn")};
  std::ostringstream out;
  const auto console = make_bench_console_reporter(out, false, axes);
  const sweep_point one{{{"n", "8"}, {"threads", "1"}, {"dt", "bf16:f32:bf16"}, {"backend", "sim"}}};
  const sweep_point two{{{"n", "8"}, {"threads", "2"}, {"dt", "bf16:f32:bf16"}, {"backend", "onednn"}}};
  console->on_result(timed(4e-3, 1), one, 0);
  console->on_result(timed(2e-3, 2, "onednn"), two, 0);
  const std::string table = out.str();
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(^BACKEND +N THREADS +DT OP )"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\nsim +8 +1 bf16:f32:bf16 matmul )"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\nonednn +8 +2 bf16:f32:bf16 matmul )"))) << table;
}

TEST(sweep, a_descriptor_cut_to_fit_the_bench_table_follows_its_row_whole) {
  std::ostringstream out;
  const auto console = make_bench_console_reporter(out, false);
  bench_result r = timed(1e-3, 1);
  r.check.descriptor = "matmul m=8 n=8 k=8 lda=1000 ldb=2000 ldc=3000 ta=1 tb=1 alpha=0.25 beta=0.5 dt=f32:f32:f32";
  console->on_result(r, {}, 0);
  console->on_result(timed(1e-3, 1), {}, 0);
  const std::string table = out.str();
  EXPECT_NE(table.find("...  "), std::string::npos) << table;
  EXPECT_NE(table.find("\n  problem: " + r.check.descriptor + "\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("problem: matmul m=8 n=8 k=8\n"), std::string::npos) << "a descriptor that fits is not repeated";
}

TEST(sweep, the_scaling_table_gives_a_type_axis_its_width_and_a_backend_axis_one_column) {
  const std::vector<sweep_axis> axes = {parse_axis("dt=f32:f32:f32,bf16:f32:bf16"), parse_axis("backend=sim,onednn")};
  const std::vector<sweep_row> rows = {{{{{"dt", "f32:f32:f32"}, {"backend", "sim"}}}, 0, timed(4e-3, 1)},
                                       {{{{"dt", "bf16:f32:bf16"}, {"backend", "onednn"}}}, 0, timed(2e-3, 1, "onednn")}};
  std::ostringstream out;
  print_scaling_table(out, axes, rows);
  const std::string table = out.str();
  EXPECT_NE(table.find("\n           DT BACKEND "), std::string::npos) << table;
  EXPECT_NE(table.find("\n  f32:f32:f32 sim "), std::string::npos) << table;
  EXPECT_NE(table.find("\nbf16:f32:bf16 onednn "), std::string::npos) << table;
}

}  // namespace
}  // namespace opval
