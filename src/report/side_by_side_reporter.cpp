// Several backends on the same problems and inputs: one row per problem, one column per
// backend (state and err/bound), so a kernel that differs from its peers stands out without
// reading every row.
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

/// State and the largest err/bound over the outputs, the figure each verdict is decided by; a
/// refusal is "-", so that the problems' column keeps its room (a legend says so).
std::string cell(const case_result& r) {
  if (r.v.st == state::skipped || r.v.st == state::unimplemented) return "-";
  std::string text = std::string(detail::state_label(r.v.st)) + (r.known_failure && is_failure(r.v.st) ? "(known)" : "");
  if (r.v.outputs.empty()) return text;
  double over = 0;
  for (const output_verdict& o : r.v.outputs) over = std::max(over, o.m.max_error_over_bound);
  return fmt::format("{} {}", text, detail::compact(over));
}

class side_by_side_reporter final : public reporter {
 public:
  side_by_side_reporter(std::ostream& out, int width) : out_(out), width_(static_cast<std::size_t>(width)) {}

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
    std::vector<std::size_t> widths;
    std::size_t cells_width = 0;
    for (const std::string& b : backends_) {
      std::size_t width = b.size();
      for (const row& w : rows_)
        if (auto c = w.cells.find(b); c != w.cells.end()) width = std::max(width, c->second.size());
      widths.push_back(width);
      cells_width += gap + width;
    }
    // The problems' column takes what the cells leave of the width; a problem longer than that
    // gets a line of its own above its cells (whole: it can be copied back).
    std::size_t label_width = std::string_view("side by side").size();
    for (const row& w : rows_) label_width = std::max(label_width, w.descriptor.size());
    label_width = std::min(label_width, width_ > cells_width + 12 ? width_ - cells_width : 12);
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
      if (w.descriptor.size() > label_width) {
        fmt::print(out_, "{}\n", w.descriptor);
        print_row("", cells, label_width, widths);
      } else {
        print_row(w.descriptor, cells, label_width, widths);
      }
    }
    if (single > 0)
      fmt::print(out_, "({} problem{} passed on one backend and refused by the others: not shown)\n", single,
                 single == 1 ? "" : "s");
    fmt::print(out_, "(-: not run by that backend; the reasons are counted below)\n");
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
      line += fmt::format("{:{}}{:<{}}", "", gap, cells[i], widths[i]);
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

  static constexpr std::size_t gap = 3;  ///< spaces before each backend's column

  std::ostream& out_;
  std::size_t width_;
  std::vector<std::string> backends_;  ///< in the order they first reported
  std::vector<row> rows_;              ///< in the order problems first reported
  std::map<std::string, run_summary> totals_;
};

}  // namespace

std::unique_ptr<reporter> make_side_by_side_reporter(std::ostream& out, int width) {
  return std::make_unique<side_by_side_reporter>(out, width);
}

}  // namespace opval
