// The JSON Lines reporter: one self-contained record per case (to_json_line), for dashboards,
// diffs between runs and the journal that `opval run --resume` finishes.
#include <ostream>

#include "opval/reporter.hpp"

namespace opval {
namespace {

class jsonl_reporter final : public reporter {
 public:
  explicit jsonl_reporter(std::ostream& out) : out_(out) {}
  void on_result(const case_result& r) override {
    // Flushed per record: a run killed half-way still leaves every finished case on disk.
    out_ << to_json_line(r) << '\n' << std::flush;
  }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<reporter> make_jsonl_reporter(std::ostream& out) { return std::make_unique<jsonl_reporter>(out); }

}  // namespace opval
