// The JUnit XML reporter of `opval run --junit FILE` (report/junit_xml.hpp for the document).
#include <chrono>

#include <fmt/format.h>

#include "opval/build_info.hpp"
#include "opval/reporter.hpp"
#include "report/junit_xml.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

/// What a CI page shows under a case that did not pass: the reason, each output's verdict and
/// bound, its worst element, and the command that reproduces it.
std::string explanation(const case_result& r) {
  std::string text = r.v.reason + "\n";
  if (r.known_failure) text += "known failure" + (r.known_failure->empty() ? "" : ": " + *r.known_failure) + "\n";
  for (const output_verdict& o : r.v.outputs) {
    text += fmt::format("output {}: {}{}\n", o.name, detail::state_label(o.st), o.reason.empty() ? "" : " - " + o.reason);
    if (!o.bound.empty()) text += "  bound: " + o.bound + "\n";
    text += fmt::format("  err/bound max {}, max |err| {}, beyond bound {}/{}\n", detail::compact(o.m.max_error_over_bound),
                        detail::compact(o.m.max_abs_error), o.m.beyond_bound, o.m.count);
    if (!o.m.worst.empty()) {
      const worst_element& w = o.m.worst.front();
      text += fmt::format("  worst at {}: expected {:.17g}, got {:.9g}, |err| {}, bound {}\n", detail::index_string(w.index),
                          w.expected, w.got, detail::compact(w.abs_error), detail::compact(w.bound));
    }
  }
  if (r.v.st != state::skipped && r.v.st != state::unimplemented) text += "repro: " + repro_of(r) + "\n";
  return text;
}

class junit_reporter final : public reporter {
 public:
  junit_reporter(std::ostream& out, std::string command) : out_(out), document_(std::move(command)) {}

  void on_start(const run_options& o) override {
    document_.property("backend", o.backend);
    document_.property("policy", o.pol.to_string());
    document_.property("seed", std::to_string(o.seed));
    if (o.reference) document_.property("reference", o.reference->name());
    document_.property("opval", fmt::format("{} ({})", build::version, build::git_sha));
    start_ = std::chrono::steady_clock::now();
  }

  void on_result(const case_result& r) override { document_.add(junit_case_of(r)); }

  void on_finish(const run_summary& s) override {
    document_.write(out_, s.seconds > 0 ? s.seconds
                                        : std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    out_.flush();
  }

 private:
  std::ostream& out_;
  junit_document document_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

junit_case junit_case_of(const case_result& r) {
  junit_case c;
  c.classname = "opval." + r.backend + "." + r.op;
  c.name = r.descriptor;
  c.seconds = r.times.total;
  if (!r.source.empty() && !r.source.starts_with("<")) c.file = r.source;
  if (r.v.st == state::passed) return c;
  c.type = detail::state_label(r.v.st);
  c.message = r.v.reason;
  c.text = explanation(r);
  if (r.known_failure && is_failure(r.v.st)) {
    c.result = junit_case::outcome::skipped;
    c.type = "known failure";
    c.message = "known failure" + (r.known_failure->empty() ? "" : ": " + *r.known_failure) + " (" + r.v.reason + ")";
  } else if (r.v.st == state::crash || r.v.st == state::timeout) {
    c.result = junit_case::outcome::error;
  } else if (is_failure(r.v.st)) {
    c.result = junit_case::outcome::failure;
  } else {
    c.result = junit_case::outcome::skipped;
  }
  return c;
}

std::unique_ptr<reporter> make_junit_reporter(std::ostream& out, std::string command) {
  return std::make_unique<junit_reporter>(out, std::move(command));
}

}  // namespace opval
