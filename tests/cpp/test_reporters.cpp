// The reporters' output formats, matched with regexes against synthetic results (no op or
// backend runs): what users and scripts read must not drift silently.
#include <cmath>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "opval/build_info.hpp"
#include "opval/reporter.hpp"
#include "report/junit_xml.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

/// A bf16 matmul case whose output `c` failed at two elements.
case_result failed_case() {
  case_result r;
  r.descriptor = "matmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal";
  r.op = "matmul";
  r.contract = "bf16:f32:bf16";
  r.seed = 7;
  r.backend = "sim";
  r.backend_version = "0.1.0";
  r.exec.implementation = "reference-loop";
  r.source = "tests/problems/x.txt:3";
  r.times.total = 0.0123;
  r.v.st = state::failed;
  r.v.reason = "output 'c': 2 of 3072 elements beyond the bound";
  r.v.policy = "bound:false_alarm=1e-06";
  output_verdict o;
  o.name = "c";
  o.st = state::failed;
  o.reason = r.v.reason;
  o.bound = "gamma_prob(n=33) + output rounding to bf16";
  o.m.count = 3072;
  o.m.max_ulps = 3.5;
  o.m.max_scaled_ulps = 2.5;
  o.m.max_error_over_bound = 2.25;
  o.m.beyond_bound = 2;
  o.m.ulp_histogram = std::vector<std::int64_t>(ulp_bins, 0);
  o.m.ulp_histogram[2] = 3070;
  o.m.worst.push_back({.index = {3, 17}, .expected = 1.25, .got = 1.2578125, .bound = 0.0035,
                       .abs_error = 0.0078125, .ulps = 3.5});
  o.m.worst.push_back({.index = {0, 4}, .expected = -2.0,
                       .got = std::numeric_limits<double>::quiet_NaN(), .bound = 0.01,
                       .abs_error = std::numeric_limits<double>::infinity(), .ulps = 1.0});
  r.v.outputs.push_back(o);
  return r;
}

case_result passed_case() {
  case_result r = failed_case();
  r.descriptor = "matmul m=4 n=5 k=3 dt=f32:f32:f32";
  r.contract = "f32:f32:f32";
  r.v.st = state::passed;
  r.v.reason.clear();
  r.v.outputs[0].st = state::passed;
  r.v.outputs[0].reason.clear();
  r.v.outputs[0].m.worst.clear();
  r.v.outputs[0].m.max_error_over_bound = 0.125;
  return r;
}

std::string console_output(const std::vector<case_result>& results, bool verbose = false,
                           console_options options = {}) {
  std::ostringstream out;
  options.verbose = verbose;
  auto rep = make_console_reporter(out, options);
  run_summary s;
  for (const case_result& r : results) {
    rep->on_result(r);
    s.add(r);
  }
  rep->on_finish(s);
  return out.str();
}

bool contains_match(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex(pattern));
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') + 1);
}

TEST(RunSummary, CountsEveryState) {
  run_summary s;
  for (state st : {state::passed, state::passed, state::failed, state::mistrusted, state::skipped,
                   state::unimplemented})
    s.add(st);
  EXPECT_EQ(s.passed, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.mistrusted, 1);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.unimplemented, 1);
  EXPECT_EQ(s.total(), 6);
}

TEST(ConsoleReporter, PassedCaseIsOneRowAndTheClosingLine) {
  std::string out = console_output({passed_case()});
  EXPECT_TRUE(contains_match(out, R"(STATE\s+ERR/BOUND\s+ULPS\s+TIME\s+PROBLEM\n)")) << out;
  // err/bound first; the ULPs at the output's scale (2.5), not the per-element maximum (3.5).
  EXPECT_TRUE(contains_match(out, R"(\nPASSED\s+0\.125\s+2\.5\s+12\.3ms  matmul m=4 n=5 k=3 dt=f32:f32:f32\n)")) << out;
  EXPECT_FALSE(contains_match(out, "repro")) << "passing cases are not explained unless verbose";
  EXPECT_EQ(last_line(out), "1 passed, 0 failed, 0 skipped");
}

TEST(ConsoleReporter, FailureIsExplainedWithWorstElementsAndRepro) {
  std::string out = console_output({failed_case()});
  EXPECT_TRUE(contains_match(out, R"(\nFAILED\s+2\.25\s+2\.5\s+12\.3ms  matmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal\n)"))
      << out;
  EXPECT_TRUE(contains_match(out, R"(FAILED: output 'c': 2 of 3072 elements beyond the bound)")) << out;
  EXPECT_TRUE(contains_match(out, R"(bound: gamma_prob\(n=33\))")) << out;
  EXPECT_TRUE(contains_match(out, R"(ulps: 2\.5 at the output's scale; per element max 3\.5 p99 0\n)")) << out;
  // index, expected (exact), got, |err|, bound, ulps
  EXPECT_TRUE(contains_match(out, R"(\[3,17\]\s+1\.25\s+1\.2578125\s+0\.00781\s+0\.0035\s+3\.5)")) << out;
  EXPECT_TRUE(contains_match(out, R"(\[0,4\]\s+-2\s+nan\s+inf\s+0\.01\s+1)")) << out;
  EXPECT_TRUE(contains_match(
      out, R"(repro: opval repro 'matmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal' --seed 7 )"
           R"(--backend sim --policy bound:false_alarm=1e-06\n)"))
      << out;
  EXPECT_EQ(last_line(out), "0 passed, 1 failed, 0 skipped");
}

TEST(ConsoleReporter, ShortSummaryListsEachFailureWithItsReproAndReason) {
  case_result known = failed_case();
  known.descriptor = "matmul m=1 n=1 k=1 dt=bf16:f32:bf16";
  known.known_failure = "documented";
  const std::string out = console_output({passed_case(), failed_case(), known});
  const std::string summary = out.substr(out.find("\nshort summary of failures (1):\n"));
  EXPECT_TRUE(contains_match(summary, R"(\nFAILED opval repro 'matmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal' --seed 7 )"
                                      R"(--backend sim --policy bound:false_alarm=1e-06 - output 'c': 2 of 3072 elements beyond the bound\n)"))
      << out;
  EXPECT_FALSE(contains_match(summary, "m=1 n=1 k=1")) << "a known failure needs no attention";
}

TEST(ConsoleReporter, QuietPrintsOnlyTheShortSummaryAndTheTotals) {
  const std::string out = console_output({passed_case(), failed_case()}, false, {.quiet = true});
  EXPECT_EQ(out, "\nshort summary of failures (1):\n"
                 "FAILED opval repro 'matmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal' --seed 7 --backend sim "
                 "--policy bound:false_alarm=1e-06 - output 'c': 2 of 3072 elements beyond the bound\n"
                 "1 passed, 1 failed, 0 skipped\n");
}

TEST(ConsoleReporter, FitsTheWidthAndNeverCutsTheProblem) {
  case_result r = failed_case();
  r.descriptor = "matmul m=4 n=5 k=3 lda=1000 ldb=2000 ldc=3000 ta=1 tb=1 alpha=0.25 beta=0.5 dt=f32:f32:f32";
  r.v.outputs[0].bound = std::string(300, 'x').replace(0, 300, 100, 'y') + " plus a long explanation of each term";
  for (int width : {80, 120}) {
    const std::string out = console_output({r}, false, {.width = width});
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      const bool whole = line == "  " + r.descriptor || line.starts_with("  repro: ") ||
                         line.starts_with("FAILED opval repro") || line.find(std::string(100, 'y')) != std::string::npos;
      EXPECT_TRUE(static_cast<int>(line.size()) <= width || whole) << width << ": " << line;
    }
    EXPECT_NE(out.find("\n  " + r.descriptor + "\n"), std::string::npos) << out;
    const std::size_t summary = out.find("\nshort summary of failures");
    EXPECT_EQ(out.substr(0, summary).find("..."), std::string::npos) << "nothing is cut above the short summary";
  }
  EXPECT_NE(console_output({r}, false, {.width = 200}).find("12.3ms  " + r.descriptor + "\n"), std::string::npos);
}

TEST(ConsoleReporter, RefusalsAreCountedPerBackendAndReasonAndListedWhenVerbose) {
  std::vector<case_result> results{passed_case()};
  for (int i = 0; i < 9; ++i) {
    case_result r = passed_case();
    r.v.st = i < 7 ? state::unimplemented : state::skipped;
    r.v.reason = i < 7 ? "no kernel for ta=1" : (i == 7 ? "reason eight" : "reason nine");
    r.v.outputs.clear();
    results.push_back(r);
  }
  for (int i = 0; i < 8; ++i) {  // more reasons than are shown one by one
    case_result r = results[1];
    r.v.reason = "other reason " + std::to_string(i);
    results.push_back(r);
  }
  const std::string out = console_output(results);
  EXPECT_FALSE(contains_match(out, R"(\n(UNIMPLEMENTED|SKIPPED) )")) << "refusal rows are not listed: " << out;
  EXPECT_TRUE(contains_match(out, R"(\nnot run: 17 \(case, backend\) pairs refused, by backend and reason \(--verbose lists them\):\n)"
                                  R"(  sim 7 UNIMPLEMENTED: no kernel for ta=1\n  sim 1 SKIPPED: reason eight\n)"))
      << out;
  EXPECT_TRUE(contains_match(out, R"(\n  sim 5 more, for 5 other reasons\n)")) << out;
  const std::string verbose = console_output(results, true);
  std::size_t rows = 0;
  for (std::size_t at = verbose.find("\nUNIMPLEMENTED "); at != std::string::npos; at = verbose.find("\nUNIMPLEMENTED ", at + 1))
    ++rows;
  EXPECT_EQ(rows, 15u) << verbose;
}

TEST(ConsoleReporter, ColourOnlyWhenAsked) {
  EXPECT_EQ(console_output({passed_case(), failed_case()}).find('\033'), std::string::npos);
  const std::string out = console_output({passed_case(), failed_case()}, false, {.colour = true});
  EXPECT_NE(out.find("\033[32mPASSED\033[0m"), std::string::npos) << out;
  EXPECT_NE(out.find("\033[1;31mFAILED\033[0m"), std::string::npos) << out;
  // Padded by its visible width: without its colour codes the output is the uncoloured one.
  EXPECT_EQ(std::regex_replace(out, std::regex("\033\\[[0-9;]*m"), ""), console_output({passed_case(), failed_case()}));
}

TEST(TextWrap, BreaksAtSpacesUnderItsIndentAndKeepsLongWordsWhole) {
  EXPECT_EQ(detail::wrap("aa bb cc dd", 8, 4, 2), "  aa bb\n    cc\n    dd\n");
  EXPECT_EQ(detail::wrap("short", 80, 4, 2), "  short\n");
  EXPECT_EQ(detail::wrap("a " + std::string(20, 'w') + " b", 10, 2, 0), "a\n  " + std::string(20, 'w') + "\n  b\n");
}

TEST(ConsoleReporter, RunnerReproWinsWhenSet) {
  case_result r = failed_case();
  r.repro = "opval repro 'matmul' --seed 7 --backend sim --policy exact";
  EXPECT_TRUE(contains_match(console_output({r}), R"(repro: opval repro 'matmul' --seed 7 --backend sim --policy exact\n)"));
}

TEST(ConsoleReporter, MistrustedCountsAsFailedAndUnimplementedAsSkipped) {
  case_result mistrusted = passed_case();
  mistrusted.v.st = state::mistrusted;
  mistrusted.v.reason = "output 'c' is all zeros";
  case_result unimplemented = passed_case();
  unimplemented.v.st = state::unimplemented;
  unimplemented.v.reason = "no such kernel";
  unimplemented.v.outputs.clear();
  case_result skipped = unimplemented;
  skipped.v.st = state::skipped;
  skipped.v.reason = "f8 is not supported on this CPU";
  std::string out =
      console_output({passed_case(), failed_case(), mistrusted, unimplemented, skipped});
  EXPECT_TRUE(contains_match(out, R"(MISTRUSTED: output 'c' is all zeros)")) << out;
  EXPECT_TRUE(contains_match(out, R"(\n  sim 1 SKIPPED: f8 is not supported on this CPU\n)")) << out;
  EXPECT_TRUE(contains_match(out, R"(\n  sim 1 UNIMPLEMENTED: no such kernel\n)")) << out;
  EXPECT_TRUE(contains_match(out, R"(\n\(of which 1 mistrusted\)\n)")) << out;
  EXPECT_TRUE(contains_match(out, R"(\n\(of which 1 unimplemented\)\n)")) << out;
  EXPECT_EQ(last_line(out), "1 passed, 2 failed, 2 skipped");
}

TEST(ConsoleReporter, TimeSplitSumsTheStagesOfTheCasesThatRan) {
  case_result ran = passed_case();
  ran.times = {.fill = 0.1, .prepare = 0.0, .execute = 0.2, .reference = 0.5, .bound = 0.1, .compare = 0.05,
               .total = 1.0};
  case_result skipped = passed_case();
  skipped.v.st = state::skipped;
  skipped.times.total = 5.0;  // its capability query: not a stage of a case that ran
  std::string out = console_output({ran, ran, skipped}, false, {.width = 300});
  EXPECT_TRUE(contains_match(out, R"(\ntime split over 2 cases: fill 200\.0ms \(10%\), prepare 0\.0ms \(0%\), )"
                                  R"(kernel 400\.0ms \(20%\), reference 1\.00s \(50%\), bound 200\.0ms \(10%\), )"
                                  R"(compare 100\.0ms \(5%\), other 100\.0ms \(5%\)\n)"))
      << out;
  EXPECT_FALSE(contains_match(console_output({skipped}), "time split")) << "nothing ran, nothing to split";
}

TEST(ConsoleReporter, VerboseExplainsPassingCases) {
  std::string out = console_output({passed_case()}, true);
  EXPECT_TRUE(contains_match(out, R"(ulp histogram: <=0:0 <=0\.5:0 <=1:3070 )")) << out;
  EXPECT_TRUE(contains_match(out, R"(repro: opval repro 'matmul m=4 n=5 k=3 dt=f32:f32:f32' --seed 7)"))
      << out;
}

/// The same two problems from `sim` and `lib`: lib passes the first with a bias test that
/// had power, and has no kernel for the second.
std::string side_by_side_output(bool two_backends) {
  std::ostringstream out;
  auto rep = make_side_by_side_reporter(out);
  case_result a = passed_case();
  a.v.outputs[0].m.max_error_over_bound = 0.25;
  case_result b = failed_case();
  rep->on_result(a);
  rep->on_result(b);
  if (two_backends) {
    case_result la = passed_case();
    la.backend = "lib";
    la.v.outputs[0].m.max_error_over_bound = 0.0625;
    la.v.outputs[0].m.bias.has_power = true;
    la.v.outputs[0].m.bias.sign_relative_mean = -0.0625;
    case_result lb = failed_case();
    lb.backend = "lib";
    lb.v.st = state::unimplemented;
    lb.v.reason = "no bf16 kernel";
    lb.v.outputs.clear();
    rep->on_result(la);
    rep->on_result(lb);
  }
  rep->on_finish(run_summary{});
  return out.str();
}

TEST(SideBySideReporter, OneRowPerProblemOneColumnPerBackend) {
  std::string out = side_by_side_output(true);
  EXPECT_TRUE(contains_match(out, R"(\nside by side\s+sim\s+lib\n)")) << out;
  EXPECT_TRUE(contains_match(
      out, R"(\nmatmul m=4 n=5 k=3 dt=f32:f32:f32\s+PASSED 0\.25\s+PASSED 0\.0625\n)"))
      << out;
  EXPECT_TRUE(contains_match(
      out, R"(\nmatmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal\s+FAILED 2\.25\s+-\n)"))
      << out;
  EXPECT_TRUE(contains_match(out, R"(\n\s+sim\s+1 passed, 1 failed, 0 skipped\n)")) << out;
  EXPECT_TRUE(contains_match(out, R"(\n\s+lib\s+1 passed, 0 failed, 1 skipped\n)")) << out;
}

TEST(SideBySideReporter, HidesProblemsOnlyOneBackendRanAndPassedAndMarksKnownFailures) {
  std::ostringstream out;
  auto rep = make_side_by_side_reporter(out);
  case_result only_sim = passed_case();
  only_sim.descriptor = "matmul m=7 n=7 k=7";
  case_result refused = only_sim;
  refused.backend = "lib";
  refused.v.st = state::unimplemented;
  refused.v.reason = "no kernel";
  case_result sim_ok = passed_case();
  case_result known = failed_case();
  known.descriptor = sim_ok.descriptor;
  known.backend = "lib";
  known.known_failure = "a documented disagreement";
  for (const case_result* r : {&only_sim, &refused, &sim_ok, &known}) rep->on_result(*r);
  run_summary s;
  rep->on_finish(s);
  EXPECT_FALSE(contains_match(out.str(), R"(matmul m=7 n=7 k=7)")) << out.str();
  EXPECT_TRUE(contains_match(out.str(), R"(\(1 problem passed on one backend and refused by the others: not shown\))"))
      << out.str();
  EXPECT_TRUE(contains_match(out.str(), R"(FAILED\(known\))")) << out.str();
  EXPECT_TRUE(contains_match(out.str(), R"(\n\s+lib\s+0 passed, 1 failed \(1 known\), 1 skipped\n)")) << out.str();
}

TEST(SideBySideReporter, SilentWithOneBackend) {
  EXPECT_EQ(side_by_side_output(false), "");
}

TEST(ConsoleReporter, BackendColumnOnlyWhenAsked) {
  std::ostringstream out;
  auto rep = make_console_reporter(out, {.show_backend = true});
  rep->on_result(passed_case());
  rep->on_finish(run_summary{});
  EXPECT_TRUE(contains_match(out.str(), R"(BACKEND\s+STATE\s+ERR/BOUND)")) << out.str();
  EXPECT_TRUE(contains_match(out.str(), R"(\nsim\s+PASSED\s+0\.125\s+2\.5\s+12\.3ms  matmul m=4 n=5 k=3 dt=f32:f32:f32\n)"))
      << out.str();
  EXPECT_FALSE(contains_match(console_output({passed_case()}), "BACKEND"));
}

TEST(JsonlReporter, OneRecordPerLineWithTheDocumentedFields) {
  std::ostringstream out;
  auto rep = make_jsonl_reporter(out);
  rep->on_result(failed_case());
  rep->on_result(passed_case());
  rep->on_finish({});
  std::istringstream lines(out.str());
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(records.size(), 2u);

  const nlohmann::json& j = records[0];
  EXPECT_TRUE(out.str().starts_with(R"({"schema_version":1,"descriptor":)")) << "key order is stable";
  EXPECT_EQ(j["schema_version"], result_schema_version);
  EXPECT_EQ(j["descriptor"], "matmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal");
  EXPECT_EQ(j["op"], "matmul");
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["contract"], "bf16:f32:bf16");
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["backend_version"], "0.1.0");
  EXPECT_EQ(j["implementation"], "reference-loop");
  EXPECT_EQ(j["state"], std::string(to_string(state::failed)));
  EXPECT_EQ(j["reason"], "output 'c': 2 of 3072 elements beyond the bound");
  EXPECT_EQ(j["policy"], "bound:false_alarm=1e-06");
  EXPECT_EQ(j["source"], "tests/problems/x.txt:3");
  EXPECT_EQ(j["opval"]["version"], build::version);
  EXPECT_EQ(j["opval"]["git_sha"], build::git_sha);
  EXPECT_DOUBLE_EQ(j["timings"]["total"].get<double>(), 0.0123);
  EXPECT_TRUE(std::regex_match(j["repro"].get<std::string>(),
                               std::regex(R"(opval repro '.*' --seed 7 --backend sim --policy \S+)")));

  const nlohmann::json& o = j["outputs"][0];
  EXPECT_EQ(o["name"], "c");
  EXPECT_EQ(o["state"], std::string(to_string(state::failed)));
  EXPECT_EQ(o["bound"], "gamma_prob(n=33) + output rounding to bf16");
  const nlohmann::json& m = o["metrics"];
  EXPECT_EQ(m["count"], 3072);
  EXPECT_EQ(m["beyond_bound"], 2);
  EXPECT_DOUBLE_EQ(m["max_ulps"].get<double>(), 3.5);
  EXPECT_EQ(m["ulp_histogram"]["counts"].size(), static_cast<std::size_t>(ulp_bins));
  EXPECT_EQ(m["ulp_histogram"]["edges"].size(), std::size(ulp_bin_edges));
  EXPECT_EQ(m["ulp_histogram"]["counts"][2], 3070);
  EXPECT_TRUE(m["bias"].contains("sign_relative_mean"));
  ASSERT_EQ(m["worst"].size(), 2u);
  EXPECT_EQ(m["worst"][0]["index"], nlohmann::json::array({3, 17}));
  EXPECT_DOUBLE_EQ(m["worst"][0]["got"].get<double>(), 1.2578125);
  // JSON has no NaN or infinity: they are strings, never silently null.
  EXPECT_EQ(m["worst"][1]["got"], "nan");
  EXPECT_EQ(m["worst"][1]["abs_error"], "inf");

  EXPECT_EQ(records[1]["state"], std::string(to_string(state::passed)));
  EXPECT_EQ(to_json_line(passed_case()) + "\n", out.str().substr(out.str().find('\n') + 1));
}

// The policy is the one given; a fallback is a note beside it, written only when taken, and
// no reporter cuts text apart to tell them.
TEST(JsonlReporter, APolicyFallbackIsItsOwnFieldBesideThePolicy) {
  case_result r = failed_case();
  EXPECT_EQ(nlohmann::json::parse(to_json_line(r)).count("policy_note"), 0u);
  r.v.policy_note = "output 'c' judged relative-to-sim:m=2: n*u_acc >= 0.5";
  const nlohmann::json j = nlohmann::json::parse(to_json_line(r));
  EXPECT_EQ(j["policy"], "bound:false_alarm=1e-06");
  EXPECT_EQ(j["policy_note"], r.v.policy_note);
  EXPECT_EQ(from_json_line(to_json_line(r)).v.policy_note, r.v.policy_note);
  std::ostringstream out;
  auto console = make_console_reporter(out, {.verbose = true});
  console->on_result(r);
  EXPECT_NE(out.str().find("policy bound:false_alarm=1e-06 (output 'c' judged relative-to-sim:m=2"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("repro: opval repro 'matmul m=64 n=48 k=33 dt=bf16:f32:bf16 fill=normal' --seed 7 --backend "
                           "sim --policy bound:false_alarm=1e-06\n"),
            std::string::npos)
      << out.str();
}

TEST(JsonlReporter, InvalidUtf8NeverLosesARecord) {
  case_result r = passed_case();
  r.v.reason = "bad byte \xff here";
  nlohmann::json j = nlohmann::json::parse(to_json_line(r));
  EXPECT_TRUE(j["reason"].get<std::string>().starts_with("bad byte "));
}

}  // namespace
}  // namespace opval

namespace opval {
namespace {

TEST(JunitXml, EscapesMarkupAndReplacesWhatXmlCannotHold) {
  EXPECT_EQ(xml_escape("a<b & 'c' \"d\">"), "a&lt;b &amp; &apos;c&apos; &quot;d&quot;&gt;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\n", 6)), "x\xEF\xBF\xBDy\tz\n");
  EXPECT_EQ(xml_escape("caf\xC3\xA9 \xFF"), "caf\xC3\xA9 \xEF\xBF\xBD") << "valid UTF-8 kept, a stray byte replaced";
}

TEST(JunitXml, EachStateBecomesWhatPytestWrites) {
  case_result failed = failed_case();
  junit_case c = junit_case_of(failed);
  EXPECT_EQ(c.result, junit_case::outcome::failure);
  EXPECT_EQ(c.classname, "opval.sim.matmul");
  EXPECT_EQ(c.name, failed.descriptor);
  EXPECT_EQ(c.message, failed.v.reason);
  EXPECT_EQ(c.file, "tests/problems/x.txt:3");
  EXPECT_NE(c.text.find("repro: opval repro 'matmul m=64 n=48 k=33"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("bound: gamma_prob(n=33)"), std::string::npos) << c.text;
  failed.known_failure = "documented";
  EXPECT_EQ(junit_case_of(failed).result, junit_case::outcome::skipped);
  EXPECT_EQ(junit_case_of(failed).type, "known failure");
  case_result crashed = failed_case();
  crashed.v.st = state::crash;
  EXPECT_EQ(junit_case_of(crashed).result, junit_case::outcome::error);
  case_result refused = failed_case();
  refused.v.st = state::unimplemented;
  EXPECT_EQ(junit_case_of(refused).result, junit_case::outcome::skipped);
  EXPECT_EQ(junit_case_of(passed_case()).result, junit_case::outcome::passed);
  std::ostringstream out;
  auto rep = make_junit_reporter(out, "opval run");
  rep->on_result(passed_case());
  rep->on_result(failed_case());
  rep->on_result(crashed);
  rep->on_result(refused);
  run_summary s;
  s.seconds = 1.5;
  rep->on_finish(s);
  const std::string xml = out.str();
  EXPECT_TRUE(xml.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites name=\"opval run\">\n")) << xml;
  EXPECT_TRUE(contains_match(xml, R"(<testsuite name="opval run" errors="1" failures="1" skipped="1" tests="4" time="1\.500" )"))
      << xml;
  EXPECT_TRUE(contains_match(xml, R"(<testcase classname="opval\.sim\.matmul" name="matmul m=4 n=5 k=3 dt=f32:f32:f32" time="0\.012300" file="tests/problems/x\.txt:3"/>)"))
      << xml;
  EXPECT_TRUE(contains_match(xml, R"(<failure type="FAILED" message="output &apos;c&apos;: 2 of 3072 elements beyond the bound">)"))
      << xml;
}

}  // namespace
}  // namespace opval
