// Several backends on the same problems and inputs: one row per problem, one column per
// backend, so a kernel that differs from its peers stands out without reading every row.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "opval/reporter.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

constexpr std::size_t max_descriptor_width = 60;

std::string compact(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", x);
}

/// State, largest ULP error over the outputs, and the sign-relative bias mean of the output
/// where it is largest in magnitude, among outputs whose bias test had power.
std::string cell(const case_result& r) {
  std::string text = std::string(detail::state_label(r.v.st)) + (r.known_failure && is_failure(r.v.st) ? "(known)" : "");
  if (r.v.st == state::skipped || r.v.st == state::unimplemented || r.v.outputs.empty())
    return text;
  double ulps = 0;
  bool any_bias = false;
  double bias = 0;
  for (const output_verdict& o : r.v.outputs) {
    ulps = std::max(ulps, o.m.max_ulps);
    if (!o.m.bias.has_power) continue;
    if (!any_bias || std::abs(o.m.bias.sign_relative_mean) > std::abs(bias))
      bias = o.m.bias.sign_relative_mean;
    any_bias = true;
  }
  if (!any_bias) return fmt::format("{} {}ulp", text, compact(ulps));
  return fmt::format("{} {}ulp bias={}", text, compact(ulps), compact(bias));
}

std::string cut(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}

class side_by_side_reporter final : public reporter {
 public:
  explicit side_by_side_reporter(std::ostream& out) : out_(out) {}

  void on_result(const case_result& r) override {
    if (std::find(backends_.begin(), backends_.end(), r.backend) == backends_.end())
      backends_.push_back(r.backend);
    totals_[r.backend].add(r);
    // A problem listed twice gets two rows: a result joins the first row of its descriptor
    // that has no result from this backend yet.
    auto it = std::find_if(rows_.begin(), rows_.end(), [&](const row& w) {
      return w.descriptor == r.descriptor && !w.cells.contains(r.backend);
    });
    if (it == rows_.end()) it = rows_.insert(rows_.end(), row{r.descriptor, {}});
    it->cells[r.backend] = cell(r);
    if (r.v.st != state::skipped && r.v.st != state::unimplemented) ++it->ran;
    if (is_failure(r.v.st)) it->failure = true;
  }

  void on_finish(const run_summary&) override {
    if (backends_.size() < 2) return;
    std::size_t label_width = std::string_view("side by side").size();
    for (const row& w : rows_) label_width = std::max(label_width, w.descriptor.size());
    label_width = std::min(label_width, max_descriptor_width);
    std::vector<std::size_t> widths;
    for (const std::string& b : backends_) {
      std::size_t width = b.size();
      for (const row& w : rows_)
        if (auto c = w.cells.find(b); c != w.cells.end()) width = std::max(width, c->second.size());
      widths.push_back(width);
    }
    fmt::print(out_, "\n");
    print_row("side by side", backends_, label_width, widths);
    std::size_t single = 0;
    for (const row& w : rows_) {
      if (ran_on_fewer_than_two(w)) {
        ++single;
        continue;
      }
      std::vector<std::string> cells;
      for (const std::string& b : backends_) {
        auto c = w.cells.find(b);
        cells.push_back(c == w.cells.end() ? "-" : c->second);
      }
      print_row(cut(w.descriptor, label_width), cells, label_width, widths);
    }
    if (single > 0)
      fmt::print(out_, "({} problem{} passed on one backend and refused by the others: not shown)\n", single,
                 single == 1 ? "" : "s");
    std::size_t name_width = 0;
    for (const std::string& b : backends_) name_width = std::max(name_width, b.size());
    fmt::print(out_, "\nper backend:\n");
    for (const std::string& b : backends_) {
      const run_summary& t = totals_[b];
      fmt::print(out_, "  {:<{}}  {} passed, {} failed{}, {} skipped\n", b, name_width, t.passed,
                 t.failures(), t.known_failed ? fmt::format(" ({} known)", t.known_failed) : "",
                 t.skipped + t.unimplemented);
    }
    out_.flush();
  }

 private:
  void print_row(const std::string& label, const std::vector<std::string>& cells,
                 std::size_t label_width, const std::vector<std::size_t>& widths) {
    std::string line = fmt::format("{:<{}}", label, label_width);
    for (std::size_t i = 0; i < cells.size(); ++i)
      line += fmt::format("   {:<{}}", cells[i], widths[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print(out_, "{}\n", line);
  }

  struct row {
    std::string descriptor;
    std::map<std::string, std::string> cells;  ///< backend -> cell text
    int ran = 0;                                ///< backends that ran it (not refused)
    bool failure = false;                       ///< some backend failed it
  };

  // A row with nothing to compare and nothing wrong: one backend ran and passed the problem,
  // the others refused it.
  static bool ran_on_fewer_than_two(const row& w) { return w.ran < 2 && !w.failure; }

  std::ostream& out_;
  std::vector<std::string> backends_;  ///< in the order they first reported
  std::vector<row> rows_;              ///< in the order problems first reported
  std::map<std::string, run_summary> totals_;
};

}  // namespace

std::unique_ptr<reporter> make_side_by_side_reporter(std::ostream& out) {
  return std::make_unique<side_by_side_reporter>(out);
}

}  // namespace opval
