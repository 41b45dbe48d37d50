// The HTML report (report/html_report.hpp, `opval report`): every section from journals and
// bench records, each failure with its worst elements and heatmap, text from records escaped,
// nothing fetched from elsewhere, and bad input named in one error line with exit code 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli_testing.hpp"
#include "opval/error.hpp"
#include "opval/runner.hpp"
#include "report/html_report.hpp"

namespace {

using namespace opval;
using opval::testing::cli_result;
using opval::testing::read_all;
using opval::testing::run_cli;
using opval::testing::scratch_dir;
namespace fs = std::filesystem;

// A case as a journal records it, with text a report must escape in its descriptor.
case_result passing_case() {
  case_result r;
  r.descriptor = R"(matmul m=4 n=5 k=3 note=<b>&"x")";
  r.op = "matmul", r.contract = "f32:f32:f32", r.backend = "sim", r.seed = 1;
  r.v.st = state::passed, r.v.policy = "bound";
  output_verdict o{.name = "dst", .st = state::passed, .bound = "gamma_K"};
  o.m.count = 20, o.m.ulp_histogram = {5, 10, 5, 0, 0, 0, 0, 0, 0};
  o.m.max_error_over_bound = 0.01;
  o.m.bias.has_power = true, o.m.bias.eligible = 400, o.m.bias.note = "sign-relative mean +0.001 ULP";
  r.v.outputs.push_back(o);
  return r;
}

// A failing case whose output carries worst elements and the tiles of its heatmap.
case_result failing_case() {
  case_result r = passing_case();
  r.descriptor = "matmul m=64 n=48 k=3", r.backend = "plugin:buggy";
  r.repro = "opval repro 'matmul m=64 n=48 k=3' --plugin buggy.so";
  output_verdict& o = r.v.outputs[0];
  o.st = r.v.st = state::failed;
  o.reason = r.v.reason = "output 'dst': 3 of 3072 elements beyond the bound";
  o.m.worst = {{{17, 42}, 1.5, 2.75, 0.001, 1.25, 1.05e7}, {{3, 9}, -0.5, -0.25, 0.001, 0.25, 4.2e6}};
  o.m.beyond_bound = 3, o.m.max_error_over_bound = 1250;
  o.m.tiles = {64, 48, 2, 2, std::vector<std::vector<double>>(32, std::vector<double>(24, 0.5))};
  o.m.tiles.max_error_over_bound[8][21] = 1250;
  return r;
}

void write_journal(const fs::path& path, const std::vector<case_result>& records) {
  std::ofstream out(path);
  for (const case_result& r : records) out << to_json_line(r) << '\n';
}

// One `opval bench` record of a sweep over n, placed on the roofline.
std::string bench_line(int n, const std::string& backend, double median) {
  const double flops = 2.0 * n * n * n, bytes = 12.0 * n * n;
  return fmt::format(
      R"({{"schema":"opval-bench","schema_version":1,"descriptor":"matmul m={0} n={0} k={0}","op":"matmul",)"
      R"("contract":"f32:f32:f32","seed":1,"backend":"{1}","state":"PASSED","reason":"","timed":true,)"
      R"("counts":{{"flops":{2},"bytes":{3}}},"timing":{{"median":{4},"ci_low":{4},"ci_high":{4},"values":[{4},{4}],"threads":1,)"
      R"("gflops":{5},"gbytes_per_second":{6},"intensity":{7},"roofline":{{"peak_type":"f32","peak_gflops":300,)"
      R"("memory_level":"L2","bandwidth_gbs":30,"attainable_gflops":100,"bound":"memory","percent_of_roof":50}}}},)"
      R"("sweep":{{"n":"{0}"}}}})",
      n, backend, flops, bytes, median, flops / median * 1e-9, bytes / median * 1e-9, flops / bytes);
}

struct report_files {
  scratch_dir dir{"opval_html_report"};
  fs::path journal = dir.path() / "run.jsonl", bench = dir.path() / "bench.jsonl";
  report_files() {
    write_journal(journal, {passing_case(), failing_case()});
    std::ofstream out(bench);
    for (int n : {32, 64, 128})
      for (const char* backend : {"onednn", "openblas"}) out << bench_line(n, backend, 1e-6 * n) << '\n';
  }
  report_sources sources() const { return {{journal.string()}, {bench.string()}, {}, "a <report>"}; }
};

TEST(html_report, has_every_section_and_its_charts) {
  const report_files files;
  const std::string html = html_report(files.sources());
  for (const char* id : {"summary", "failures", "histograms", "bias", "scaling", "roofline", "trends"})
    EXPECT_NE(html.find(fmt::format("<section id=\"{}\">", id)), std::string::npos) << id;
  for (const char* chart : {"chart heatmap", "chart bar-chart", "chart line-chart"})
    EXPECT_NE(html.find(chart), std::string::npos) << chart;
  // Scaling: one line per backend along n; the roofline: its roof and both backends' points.
  EXPECT_NE(html.find("throughput against size"), std::string::npos);
  EXPECT_NE(html.find("f32 300 GFLOP/s, L2 30 GB/s"), std::string::npos);
  EXPECT_NE(html.find("No run history was given"), std::string::npos);
  EXPECT_NE(html.find("<title>a &lt;report&gt;</title>"), std::string::npos);
}

TEST(html_report, shows_each_failure_with_its_worst_elements_and_heatmap) {
  const report_files files;
  const std::string html = html_report(files.sources());
  const std::size_t failures = html.find("<section id=\"failures\">"), next = html.find("<section id=\"histograms\">");
  ASSERT_NE(failures, std::string::npos);
  const std::string section = html.substr(failures, next - failures);
  EXPECT_NE(section.find("matmul m=64 n=48 k=3 on plugin:buggy"), std::string::npos);
  EXPECT_NE(section.find("3 of 3072 elements beyond the bound"), std::string::npos);
  EXPECT_NE(section.find("opval repro &apos;matmul m=64 n=48 k=3&apos; --plugin buggy.so"), std::string::npos) << section;
  EXPECT_NE(section.find("<td>[17,42]</td><td>1.5</td><td>2.75</td>"), std::string::npos);
  EXPECT_NE(section.find("<td>[3,9]</td>"), std::string::npos);
  // 32 x 24 tiles, the hot one named by the elements it covers.
  std::size_t tiles = 0;
  for (std::size_t at = section.find("class=\"tile\""); at != std::string::npos; at = section.find("class=\"tile\"", at + 1))
    ++tiles;
  EXPECT_EQ(tiles, 32u * 24u);
  EXPECT_NE(section.find("rows 16-17, columns 42-43: max |error| / bound = 1.25e+03"), std::string::npos);
  // The passing case is not among the failures.
  EXPECT_EQ(section.find("on sim"), std::string::npos);
}

// A run where everything fails keeps its report small enough to open: charts for the first 50
// failing outputs, worst elements for all.
TEST(html_report, charts_the_first_fifty_failing_outputs_and_lists_every_failure) {
  const scratch_dir dir("opval_html_report_many");
  const fs::path journal = dir.path() / "run.jsonl";
  write_journal(journal, std::vector<case_result>(51, failing_case()));
  const std::string html = html_report({{journal.string()}, {}, {}, "many"});
  std::size_t heatmaps = 0, worst = 0;
  for (std::size_t at = html.find("chart heatmap"); at != std::string::npos; at = html.find("chart heatmap", at + 1))
    ++heatmaps;
  for (std::size_t at = html.find("<td>[17,42]</td>"); at != std::string::npos; at = html.find("<td>[17,42]</td>", at + 1))
    ++worst;
  EXPECT_EQ(heatmaps, 50u);
  EXPECT_EQ(worst, 51u);
  EXPECT_NE(html.find("51 outputs failed: the first 50 have their heatmap"), std::string::npos);
}

TEST(html_report, escapes_record_text_and_references_nothing_outside) {
  const report_files files;
  const std::string html = html_report(files.sources());
  EXPECT_EQ(html.find(R"(<b>&"x")"), std::string::npos);
  EXPECT_NE(html.find("note=&lt;b&gt;&amp;&quot;x&quot;"), std::string::npos);
  for (const char* external : {"http://", "https://", "src=\"//", "href=\"//", "url(", "<script", "<link", "@import"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  // The only links are the page's own anchors.
  const std::regex href("href=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it)
    EXPECT_EQ((*it)[1].str().front(), '#') << (*it)[1].str();
  EXPECT_EQ(html.find("src="), std::string::npos);
}

TEST(html_report, draws_the_trends_it_is_given) {
  const report_files files;
  report_sources s = files.sources();
  s.trends = {{"matmul m=64 on onednn", "median seconds", {{"run <1>", 2e-6}, {"run 2", 1.8e-6}, {"run 3", 1.9e-6}}}};
  const std::string html = html_report(s);
  EXPECT_EQ(html.find("No run history was given"), std::string::npos);
  const std::size_t trends = html.find("<section id=\"trends\">");
  ASSERT_NE(trends, std::string::npos);
  EXPECT_NE(html.find("chart line-chart", trends), std::string::npos);
  EXPECT_NE(html.find("run &lt;1&gt;", trends), std::string::npos);
}

TEST(html_report, bad_input_names_the_file) {
  const report_files files;
  auto message_of = [](const report_sources& s) {
    try {
      html_report(s);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string missing = (files.dir.path() / "missing.jsonl").string();
  EXPECT_NE(message_of({{missing}, {}, {}, ""}).find(missing), std::string::npos);
  const fs::path corrupt = files.dir.path() / "corrupt.jsonl";
  std::ofstream(corrupt) << to_json_line(passing_case()) << "\n{not json\n";
  EXPECT_NE(message_of({{corrupt.string()}, {}, {}, ""}).find("journal '" + corrupt.string() + "' line 2"),
            std::string::npos);
  // A bench file given as a journal, and a journal given as bench records.
  EXPECT_NE(message_of({{files.bench.string()}, {}, {}, ""}).find(files.bench.string()), std::string::npos);
  EXPECT_NE(message_of({{}, {files.journal.string()}, {}, ""}).find(files.journal.string() + ":1"), std::string::npos);
  EXPECT_NE(message_of({}).find("give a run's journal"), std::string::npos);
}

TEST(html_report_cli, writes_the_file_and_refuses_bad_input_in_one_line) {
  const report_files files;
  const fs::path out = files.dir.path() / "out" / "report.html";
  cli_result r = run_cli(OPVAL_CLI_PATH, files.dir.path(),
                         {"report", files.journal.string(), "--bench", files.bench.string(), "-o", out.string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("report of 2 cases and 6 benchmarks written to"), std::string::npos) << r.out;
  EXPECT_NE(read_all(out).find("<section id=\"roofline\">"), std::string::npos);

  r = run_cli(OPVAL_CLI_PATH, files.dir.path(), {"report", "nothing-here.jsonl", "-o", "x.html"});
  EXPECT_EQ(r.code, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("nothing-here.jsonl"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(files.dir.path() / "x.html"));
  // The report would overwrite its own journal.
  r = run_cli(OPVAL_CLI_PATH, files.dir.path(), {"report", files.journal.string(), "-o", files.journal.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(read_all(files.journal).find("plugin:buggy"), std::string::npos);
}

}  // namespace
