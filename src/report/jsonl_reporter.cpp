// The JSON Lines reporter: one self-contained record per case, for dashboards and diffs
// between runs. The schema is documented in docs/CLI.md; bump result_schema_version when a
// field changes meaning or disappears (adding fields does not need a bump).
#include <cmath>
#include <ostream>

#include <nlohmann/json.hpp>

#include "opval/build_info.hpp"
#include "opval/reporter.hpp"
#include "report/report_util.hpp"

namespace opval {
namespace {

using json = nlohmann::ordered_json;

/// JSON has no NaN or infinity; they are written as the strings "nan", "inf", "-inf" so a
/// record never loses the fact that a kernel produced one.
json number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

json to_json(const bias_result& b) {
  return json{{"has_power", b.has_power},
              {"eligible", b.eligible},
              {"sign_relative_mean", number(b.sign_relative_mean)},
              {"sign_relative_z", number(b.sign_relative_z)},
              {"plain_mean", number(b.plain_mean)},
              {"plain_z", number(b.plain_z)},
              {"biased", b.biased},
              {"note", b.note}};
}

json to_json(const worst_element& w) {
  return json{{"index", w.index},           {"expected", number(w.expected)},
              {"got", number(w.got)},       {"bound", number(w.bound)},
              {"abs_error", number(w.abs_error)}, {"ulps", number(w.ulps)}};
}

json to_json(const metrics& m) {
  json worst = json::array();
  for (const worst_element& w : m.worst) worst.push_back(to_json(w));
  json edges = json::array();
  for (double e : ulp_bin_edges) edges.push_back(e);
  return json{{"count", m.count},
              {"max_abs_error", number(m.max_abs_error)},
              {"mean_abs_error", number(m.mean_abs_error)},
              {"max_rel_error", number(m.max_rel_error)},
              {"mean_rel_error", number(m.mean_rel_error)},
              {"max_ulps", number(m.max_ulps)},
              {"p50_ulps", number(m.p50_ulps)},
              {"p99_ulps", number(m.p99_ulps)},
              {"ulp_histogram", {{"edges", edges}, {"counts", m.ulp_histogram}}},
              {"beyond_bound", m.beyond_bound},
              {"max_error_over_bound", number(m.max_error_over_bound)},
              {"median_error_over_bound", number(m.median_error_over_bound)},
              {"nan_mismatch", m.nan_mismatch},
              {"inf_mismatch", m.inf_mismatch},
              {"neg_zero_mismatch", m.neg_zero_mismatch},
              {"mean_signed_error", number(m.mean_signed_error)},
              {"cosine_similarity", number(m.cosine_similarity)},
              {"got_all_zero", m.got_all_zero},
              {"got_constant", m.got_constant},
              {"ref_constant", m.ref_constant},
              {"bias", to_json(m.bias)},
              {"worst", worst}};
}

json to_json(const output_verdict& o) {
  return json{{"name", o.name},
              {"state", to_string(o.st)},
              {"reason", o.reason},
              {"bound", o.bound},
              {"metrics", to_json(o.m)}};
}

json to_json(const case_timings& t) {
  json j{{"fill", t.fill},   {"prepare", t.prepare}, {"execute", t.execute}, {"reference", t.reference},
         {"bound", t.bound}, {"compare", t.compare}, {"total", t.total}};
  if (t.device_kernel >= 0) j["device_kernel"] = t.device_kernel;
  return j;
}

json to_json(const case_result& r) {
  json outputs = json::array();
  for (const output_verdict& o : r.v.outputs) outputs.push_back(to_json(o));
  return json{{"schema_version", result_schema_version},
              {"descriptor", r.descriptor},
              {"op", r.op},
              {"seed", r.seed},
              {"contract", r.contract},
              {"backend", r.backend},
              {"backend_version", r.backend_version},
              {"implementation", r.exec.implementation},
              {"actual_contract", r.exec.actual_contract},
              {"observed_contract", r.observed_contract},
              {"observed_precision", r.observed_note},
              {"state", to_string(r.v.st)},
              {"reason", r.v.reason},
              {"policy", r.v.policy},
              {"outputs", outputs},
              {"timings", to_json(r.times)},
              {"repro", detail::repro_command(r, r.v.policy.substr(0, r.v.policy.find(' ')))},
              {"source", r.source},
              {"opval", {{"version", build::version}, {"git_sha", build::git_sha}}}};
}

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

std::string to_json_line(const case_result& r) {
  // Replace, not throw, on invalid UTF-8: a record must never be lost to a stray byte.
  return to_json(r).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::unique_ptr<reporter> make_jsonl_reporter(std::ostream& out) {
  return std::make_unique<jsonl_reporter>(out);
}

}  // namespace opval
