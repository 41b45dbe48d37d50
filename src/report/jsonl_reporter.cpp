// The JSON Lines reporter: one self-contained record per case, for dashboards and diffs
// between runs. The schema is documented in docs/CLI.md; bump result_schema_version when a
// field changes meaning or disappears (adding fields does not need a bump).
#include <cmath>
#include <limits>
#include <ostream>

#include <nlohmann/json.hpp>

#include "opval/build_info.hpp"
#include "opval/error.hpp"
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
              {"distinct", number(b.distinct)},
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
              {"ref_significant", m.ref_significant},
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

json to_json(const heap_stats& h) {
  if (!h.measured) return json{{"measured", false}};
  return json{{"measured", true},          {"peak_bytes", h.peak_bytes}, {"total_bytes", h.total_bytes},
              {"allocations", h.allocations}, {"releases", h.releases},   {"net_bytes", h.net_bytes}};
}

/// The case's memory record, or null when nothing was measured (a case that did not run).
json to_json(const case_memory& m) {
  const leak_check& l = m.leak;
  const bool checked = l.runs > 0 || !l.finding.empty();
  if (!m.run.kernel.measured && !m.run.kernel_rss_delta && !checked) return nullptr;
  json j{{"prepare", to_json(m.run.prepare)}, {"kernel", to_json(m.run.kernel)}};
  if (m.run.kernel_rss_delta) j["kernel_rss_delta"] = *m.run.kernel_rss_delta;
  if (checked)
    j["leak_check"] = {{"runs", l.runs}, {"growth_bytes", l.growth}, {"growth_blocks", l.growth_blocks}, {"leaks", l.leaks},
                       {"bytes_per_call", l.bytes_per_call}, {"finding", l.finding}};
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
              {"memory", to_json(r.memory)},
              {"repro", detail::repro_command(r, r.v.policy.substr(0, r.v.policy.find(' ')))},
              {"source", r.source},
              {"opval", {{"version", build::version}, {"git_sha", build::git_sha}}}};
}


// ---------------------------------------------------------------- reading records back
// The inverse of the to_json functions above: each field read by the name it is written
// under, so that a record read back writes out the same line.

/// `j[key]`, or an error naming the field when the record lacks it.
const json& field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw error(std::string("result record has no field '") + key + "'");
  return *it;
}

double number_from(const json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw error("result record has '" + s + "' where a number belongs");
  }
  return j.get<double>();
}

template <class T>
void read(const json& j, const char* key, T& out) {
  if constexpr (std::is_same_v<T, double>)
    out = number_from(field(j, key));
  else
    out = field(j, key).get<T>();
}

state state_from(const json& j) {
  const std::string text = j.get<std::string>();
  if (auto s = parse_state(text)) return *s;
  throw error("result record has unknown state '" + text + "'");
}

bias_result bias_from(const json& j) {
  bias_result b;
  read(j, "has_power", b.has_power);
  read(j, "eligible", b.eligible);
  read(j, "distinct", b.distinct);
  read(j, "sign_relative_mean", b.sign_relative_mean);
  read(j, "sign_relative_z", b.sign_relative_z);
  read(j, "plain_mean", b.plain_mean);
  read(j, "plain_z", b.plain_z);
  read(j, "biased", b.biased);
  read(j, "note", b.note);
  return b;
}

worst_element worst_from(const json& j) {
  worst_element w;
  read(j, "index", w.index);
  read(j, "expected", w.expected);
  read(j, "got", w.got);
  read(j, "bound", w.bound);
  read(j, "abs_error", w.abs_error);
  read(j, "ulps", w.ulps);
  return w;
}

metrics metrics_from(const json& j) {
  metrics m;
  read(j, "count", m.count);
  read(j, "max_abs_error", m.max_abs_error);
  read(j, "mean_abs_error", m.mean_abs_error);
  read(j, "max_rel_error", m.max_rel_error);
  read(j, "mean_rel_error", m.mean_rel_error);
  read(j, "max_ulps", m.max_ulps);
  read(j, "p50_ulps", m.p50_ulps);
  read(j, "p99_ulps", m.p99_ulps);
  read(field(j, "ulp_histogram"), "counts", m.ulp_histogram);
  read(j, "beyond_bound", m.beyond_bound);
  read(j, "max_error_over_bound", m.max_error_over_bound);
  read(j, "median_error_over_bound", m.median_error_over_bound);
  read(j, "nan_mismatch", m.nan_mismatch);
  read(j, "inf_mismatch", m.inf_mismatch);
  read(j, "neg_zero_mismatch", m.neg_zero_mismatch);
  read(j, "mean_signed_error", m.mean_signed_error);
  read(j, "cosine_similarity", m.cosine_similarity);
  read(j, "got_all_zero", m.got_all_zero);
  read(j, "got_constant", m.got_constant);
  read(j, "ref_constant", m.ref_constant);
  read(j, "ref_significant", m.ref_significant);
  m.bias = bias_from(field(j, "bias"));
  for (const json& w : field(j, "worst")) m.worst.push_back(worst_from(w));
  return m;
}

output_verdict output_from(const json& j) {
  output_verdict o;
  read(j, "name", o.name);
  o.st = state_from(field(j, "state"));
  read(j, "reason", o.reason);
  read(j, "bound", o.bound);
  o.m = metrics_from(field(j, "metrics"));
  return o;
}

case_timings timings_from(const json& j) {
  case_timings t;
  read(j, "fill", t.fill);
  read(j, "prepare", t.prepare);
  read(j, "execute", t.execute);
  read(j, "reference", t.reference);
  read(j, "bound", t.bound);
  read(j, "compare", t.compare);
  read(j, "total", t.total);
  if (j.contains("device_kernel")) read(j, "device_kernel", t.device_kernel);
  return t;
}

heap_stats heap_from(const json& j) {
  heap_stats h;
  read(j, "measured", h.measured);
  if (!h.measured) return h;
  read(j, "peak_bytes", h.peak_bytes);
  read(j, "total_bytes", h.total_bytes);
  read(j, "allocations", h.allocations);
  read(j, "releases", h.releases);
  read(j, "net_bytes", h.net_bytes);
  return h;
}

case_memory memory_from(const json& j) {
  case_memory m;
  if (j.is_null()) return m;
  m.run.prepare = heap_from(field(j, "prepare"));
  m.run.kernel = heap_from(field(j, "kernel"));
  if (j.contains("kernel_rss_delta")) m.run.kernel_rss_delta = field(j, "kernel_rss_delta").get<std::int64_t>();
  if (j.contains("leak_check")) {
    const json& l = field(j, "leak_check");
    read(l, "runs", m.leak.runs);
    read(l, "growth_bytes", m.leak.growth);
    read(l, "growth_blocks", m.leak.growth_blocks);
    read(l, "leaks", m.leak.leaks);
    read(l, "bytes_per_call", m.leak.bytes_per_call);
    read(l, "finding", m.leak.finding);
  }
  return m;
}

case_result case_from(const json& j) {
  if (const int v = field(j, "schema_version").get<int>(); v != result_schema_version)
    throw error("result record has schema_version " + std::to_string(v) + ", this opval reads " +
                std::to_string(result_schema_version));
  case_result r;
  read(j, "descriptor", r.descriptor);
  read(j, "op", r.op);
  read(j, "seed", r.seed);
  read(j, "contract", r.contract);
  read(j, "backend", r.backend);
  read(j, "backend_version", r.backend_version);
  read(j, "implementation", r.exec.implementation);
  read(j, "actual_contract", r.exec.actual_contract);
  read(j, "observed_contract", r.observed_contract);
  read(j, "observed_precision", r.observed_note);
  r.v.st = state_from(field(j, "state"));
  read(j, "reason", r.v.reason);
  read(j, "policy", r.v.policy);
  for (const json& o : field(j, "outputs")) r.v.outputs.push_back(output_from(o));
  r.times = timings_from(field(j, "timings"));
  if (j.contains("memory")) r.memory = memory_from(field(j, "memory"));  // absent before the memory checks
  read(j, "repro", r.repro);
  read(j, "source", r.source);
  return r;
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

case_result from_json_line(std::string_view line) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {
    throw error(std::string("result record is not JSON: ") + e.what());
  }
  if (!j.is_object()) throw error("result record is not a JSON object");
  try {
    return case_from(j);
  } catch (const json::exception& e) {
    throw error(std::string("result record has a field of the wrong type: ") + e.what());
  }
}

std::unique_ptr<reporter> make_jsonl_reporter(std::ostream& out) {
  return std::make_unique<jsonl_reporter>(out);
}

}  // namespace opval
