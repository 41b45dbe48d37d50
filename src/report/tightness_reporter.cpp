// Bound tightness: a bound that is far looser than the errors a correct kernel makes passes
// wrong kernels too, so every run can report how much of its bound the sim backend used.
#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "opval/reporter.hpp"

namespace opval {
namespace {

class tightness_reporter final : public reporter {
 public:
  explicit tightness_reporter(std::ostream& out) : out_(out) {}

  void on_result(const case_result& r) override {
    if (r.v.st == state::skipped || r.v.st == state::unimplemented) return;
    // Only outputs judged by an error bound say anything about its tightness.
    if (r.v.policy.rfind("bound", 0) != 0) return;
    for (const auto& o : r.v.outputs) {
      if (o.bound.rfind("relative-to-sim", 0) == 0 || o.bound.rfind("exact", 0) == 0) continue;
      add(stats_[{r.op, r.contract}], o.m);
      // An output's posterior tests (softmax's row shape) have bounds of their own.
      for (const auto& c : o.checks) add(stats_[{r.op + " (" + c.name + ")", r.contract}], c.m);
    }
  }

  void on_finish(const run_summary&) override {
    if (stats_.empty()) return;
    out_ << "\nbound tightness (observed |error| / bound; median of per-case medians, max over cases):\n";
    out_ << fmt::format("  {:<24} {:<26} {:>6} {:>10} {:>10}  {}\n", "op", "contract", "cases", "median", "max", "");
    for (auto& [key, s] : stats_) {
      std::sort(s.medians.begin(), s.medians.end());
      double median = s.medians[s.medians.size() / 2];
      std::string flag;
      if (s.max_abs_error == 0) flag = "exact results: only the output rounding is bounded";
      else if (s.max < 0.01) flag = "FLAG: bound > 100x the largest observed error";
      out_ << fmt::format("  {:<24} {:<26} {:>6} {:>10.3g} {:>10.3g}  {}\n", key.first, key.second,
                          s.medians.size(), median, s.max, flag);
    }
  }

 private:
  struct stats {
    std::vector<double> medians;
    double max = 0;
    double max_abs_error = 0;
  };
  static void add(stats& s, const metrics& m) {
    s.medians.push_back(m.median_error_over_bound);
    s.max = std::max(s.max, m.max_error_over_bound);
    s.max_abs_error = std::max(s.max_abs_error, m.max_abs_error);
  }
  std::ostream& out_;
  std::map<std::pair<std::string, std::string>, stats> stats_;
};

}  // namespace

std::unique_ptr<reporter> make_tightness_reporter(std::ostream& out) {
  return std::make_unique<tightness_reporter>(out);
}

}  // namespace opval
