// The JUnit XML of `opval bench --junit FILE`: the check's verdict as `opval run` writes it, a
// timed case passed with its figures as properties.
#include <fmt/format.h>

#include "bench/bench_report.hpp"
#include "opval/build_info.hpp"
#include "report/junit_xml.hpp"

namespace opval {
namespace {

class bench_junit_reporter final : public bench_reporter {
 public:
  explicit bench_junit_reporter(std::ostream& out) : out_(out), document_("opval bench") {
    document_.property("opval", fmt::format("{} ({})", build::version, build::git_sha));
  }

  void on_result(const bench_result& r, const sweep_point& point, std::size_t) override {
    junit_case c = junit_case_of(r.check);
    // Points of a sweep over threads or cache share a descriptor: the point tells them apart.
    std::string where;
    for (const auto& [axis, value] : point.values) where += fmt::format("{}{}={}", where.empty() ? "" : " ", axis, value);
    if (!where.empty()) c.name += " [" + where + "]";
    const sampling_result& t = r.timing;
    c.seconds = r.check.times.total + t.warmup_seconds + t.sampling_seconds;
    seconds_ += c.seconds;
    if (r.timed) {
      c.properties = {{"median_seconds", fmt::format("{:.6g}", t.summary.median)},
                      {"ci95_low_seconds", fmt::format("{:.6g}", t.median_ci.low)},
                      {"ci95_high_seconds", fmt::format("{:.6g}", t.median_ci.high)},
                      {"samples", std::to_string(t.samples.size())},
                      {"gflops", fmt::format("{:.4g}", r.gflops)},
                      {"gbytes_per_second", fmt::format("{:.4g}", r.gbytes_per_second)},
                      {"stop", t.stop_reason}};
      for (const std::string& w : t.warnings) c.properties.emplace_back("warning", w);
    }
    document_.add(std::move(c));
  }

  void on_finish(const bench_summary&) override {
    document_.write(out_, seconds_);
    out_.flush();
  }

 private:
  std::ostream& out_;
  junit_document document_;
  double seconds_ = 0;
};

}  // namespace

std::unique_ptr<bench_reporter> make_bench_junit_reporter(std::ostream& out) {
  return std::make_unique<bench_junit_reporter>(out);
}

}  // namespace opval
