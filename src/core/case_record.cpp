// The record of a case (opval/runner.hpp): one self-contained JSON object, which the JSON
// Lines reporter writes per case, the journal replays and the worker process answers with.
// The schema is documented in docs/CLI.md; bump result_schema_version when a field changes
// meaning or disappears (adding fields does not need a bump).
#include <cmath>
#include <concepts>
#include <iterator>
#include <limits>
#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "opval/build_info.hpp"
#include "opval/error.hpp"
#include "opval/policy.hpp"
#include "opval/runner.hpp"

namespace opval {
namespace {

using json = nlohmann::ordered_json;

// ---------------------------------------------------------------- one field list per type
// Each record type lists its fields once, in schema order, in a describe() overload. The
// json_writer turns them into JSON; the json_reader reads them back by the same names, so a
// record read back writes out the same line. describe(io, x) says, per field:
//   io(key, member)                    always present
//   io.optional(key, member, present)  written when `present`, read when there
//   io.computed(key, member, make)     written as make() (derived from the record), read into member
//   io.written(key, make)              written as make(), ignored when read
//   io.nested(key, fn)                 an object whose fields fn(io) describes

/// `j[key]`, or an error naming the field when the record lacks it.
const json& field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw error(std::string("result record has no field '") + key + "'");
  return *it;
}

template <class T>
concept described = requires(T& x) { describe(std::declval<struct json_writer&>(), x); };

struct json_writer {
  json j = json::object();

  template <class T>
  void operator()(const char* key, const T& v) {
    j[key] = value(v);
  }
  template <class T>
  void optional(const char* key, const T& v, bool present) {
    if (present) (*this)(key, v);
  }
  template <class T, class Make>
  void computed(const char* key, const T&, Make&& make) {
    j[key] = make();
  }
  template <class Make>
  void written(const char* key, Make&& make) {
    j[key] = make();
  }
  template <class Fn>
  void nested(const char* key, Fn&& fn) {
    json_writer sub;
    fn(sub);
    j[key] = std::move(sub.j);
  }

  /// JSON has no NaN or infinity; they are written as the strings "nan", "inf", "-inf" so a
  /// record never loses the fact that a kernel produced one.
  static json value(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return x;
  }
  static json value(state s) { return to_string(s); }
  static json value(const case_memory& m);
  template <class T>
  static json value(const std::optional<T>& v) {
    return v ? value(*v) : json(nullptr);
  }
  template <class T>
  static json value(const std::vector<T>& v) {
    json a = json::array();
    for (const T& x : v) a.push_back(value(x));
    return a;
  }
  template <class T>
  static json value(const T& x) {
    if constexpr (described<const T>) {
      json_writer sub;
      describe(sub, x);
      return std::move(sub.j);
    } else {
      return x;
    }
  }
};

struct json_reader {
  const json& j;

  template <class T>
  void operator()(const char* key, T& v) const {
    read(field(j, key), v);
  }
  template <class T>
  void optional(const char* key, T& v, bool) const {
    if (j.contains(key)) (*this)(key, v);
  }
  template <class T, class Make>
  void computed(const char* key, T& v, Make&&) const {
    (*this)(key, v);
  }
  template <class Make>
  void written(const char*, Make&&) const {}
  template <class Fn>
  void nested(const char* key, Fn&& fn) const {
    const json_reader sub{field(j, key)};
    fn(sub);
  }

  static void read(const json& j, double& x) {
    if (j.is_string()) {
      const std::string& s = j.get_ref<const std::string&>();
      if (s == "nan") x = std::numeric_limits<double>::quiet_NaN();
      else if (s == "inf") x = std::numeric_limits<double>::infinity();
      else if (s == "-inf") x = -std::numeric_limits<double>::infinity();
      else throw error("result record has '" + s + "' where a number belongs");
      return;
    }
    x = j.get<double>();
  }
  static void read(const json& j, state& s) {
    const std::string text = j.get<std::string>();
    auto parsed = parse_state(text);
    if (!parsed) throw error("result record has unknown state '" + text + "'");
    s = *parsed;
  }
  static void read(const json& j, case_memory& m);
  template <class T>
  static void read(const json& j, std::optional<T>& v) {
    if (j.is_null()) return v.reset();
    read(j, v.emplace());
  }
  template <class T>
  static void read(const json& j, std::vector<T>& v) {
    v.clear();
    for (const json& x : j) read(x, v.emplace_back());
  }
  template <class T>
  static void read(const json& j, T& x) {
    if constexpr (described<T>) {
      const json_reader sub{j};
      describe(sub, x);
    } else {
      j.get_to(x);
    }
  }
};

// `X` is T or const T: one describe() serves the writer (const) and the reader.
template <class X, class T>
concept either = std::same_as<std::remove_const_t<X>, T>;

template <class Io, either<bias_result> X>
void describe(Io& io, X& b) {
  io("has_power", b.has_power);
  io("eligible", b.eligible);
  io("distinct", b.distinct);
  io("sign_relative_mean", b.sign_relative_mean);
  io("sign_relative_z", b.sign_relative_z);
  io("plain_mean", b.plain_mean);
  io("plain_z", b.plain_z);
  io("biased", b.biased);
  io("note", b.note);
}

template <class Io, either<worst_element> X>
void describe(Io& io, X& w) {
  io("index", w.index);
  io("expected", w.expected);
  io("got", w.got);
  io("bound", w.bound);
  io("abs_error", w.abs_error);
  io("ulps", w.ulps);
}

template <class Io, either<error_tiles> X>
void describe(Io& io, X& t) {
  io("rows", t.rows);
  io("cols", t.cols);
  io("tile_rows", t.tile_rows);
  io("tile_cols", t.tile_cols);
  io("max_error_over_bound", t.max_error_over_bound);
}

template <class Io, either<metrics> X>
void describe(Io& io, X& m) {
  io("count", m.count);
  io("max_abs_error", m.max_abs_error);
  io("mean_abs_error", m.mean_abs_error);
  io("max_rel_error", m.max_rel_error);
  io("mean_rel_error", m.mean_rel_error);
  io("max_ulps", m.max_ulps);
  io("max_scaled_ulps", m.max_scaled_ulps);
  io("p50_ulps", m.p50_ulps);
  io("p99_ulps", m.p99_ulps);
  io.nested("ulp_histogram", [&](auto& h) {
    h.written("edges", [] { return json(std::vector<double>(std::begin(ulp_bin_edges), std::end(ulp_bin_edges))); });
    h("counts", m.ulp_histogram);
  });
  io("beyond_bound", m.beyond_bound);
  io("max_error_over_bound", m.max_error_over_bound);
  io("median_error_over_bound", m.median_error_over_bound);
  io("nan_mismatch", m.nan_mismatch);
  io("inf_mismatch", m.inf_mismatch);
  io("neg_zero_mismatch", m.neg_zero_mismatch);
  io("mean_signed_error", m.mean_signed_error);
  io("cosine_similarity", m.cosine_similarity);
  io("got_all_zero", m.got_all_zero);
  io("got_constant", m.got_constant);
  io("ref_constant", m.ref_constant);
  io("ref_significant", m.ref_significant);
  io("bias", m.bias);
  io("worst", m.worst);
  io.optional("tiles", m.tiles, !m.tiles.empty());  // only for a failing output
}

template <class Io, either<output_check> X>
void describe(Io& io, X& c) {
  io("name", c.name);
  io("state", c.st);
  io("reason", c.reason);
  io("bound", c.bound);
  io("metrics", c.m);
}

template <class Io, either<output_verdict> X>
void describe(Io& io, X& o) {
  io("name", o.name);
  io("state", o.st);
  io("reason", o.reason);
  io("bound", o.bound);
  io("metrics", o.m);
  io.optional("checks", o.checks, !o.checks.empty());  // only for ops with posterior tests
}

template <class Io, either<case_timings> X>
void describe(Io& io, X& t) {
  io("fill", t.fill);
  io("prepare", t.prepare);
  io("execute", t.execute);
  io("reference", t.reference);
  io("bound", t.bound);
  io("compare", t.compare);
  io("total", t.total);
  io.optional("device_kernel", t.device_kernel, t.device_kernel >= 0);
}

template <class Io, either<heap_stats> X>
void describe(Io& io, X& h) {
  io("measured", h.measured);
  if (!h.measured) return;
  io("peak_bytes", h.peak_bytes);
  io("total_bytes", h.total_bytes);
  io("allocations", h.allocations);
  io("releases", h.releases);
  io("net_bytes", h.net_bytes);
}

template <class Io, either<leak_check> X>
void describe(Io& io, X& l) {
  io("runs", l.runs);
  io("growth_bytes", l.growth);
  io("growth_blocks", l.growth_blocks);
  io("leaks", l.leaks);
  io("bytes_per_call", l.bytes_per_call);
  io("finding", l.finding);
}

bool leak_checked(const leak_check& l) { return l.runs > 0 || !l.finding.empty(); }

template <class Io, either<case_memory> X>
void describe(Io& io, X& m) {
  io("prepare", m.run.prepare);
  io("kernel", m.run.kernel);
  io.optional("kernel_rss_delta", m.run.kernel_rss_delta, m.run.kernel_rss_delta.has_value());
  io.optional("leak_check", m.leak, leak_checked(m.leak));
}

/// The case's memory record, or null when nothing was measured (a case that did not run).
json json_writer::value(const case_memory& m) {
  if (!m.run.kernel.measured && !m.run.kernel_rss_delta && !leak_checked(m.leak)) return nullptr;
  json_writer sub;
  describe(sub, m);
  return std::move(sub.j);
}

void json_reader::read(const json& j, case_memory& m) {
  m = {};
  if (j.is_null()) return;
  const json_reader sub{j};
  describe(sub, m);
}

void check_schema_version(int version) {
  if (version != result_schema_version)
    throw error("result record has schema_version " + std::to_string(version) + ", this opval reads " +
                std::to_string(result_schema_version));
}

// A record carries the case's seed and policy, not its other options: those stay at their
// defaults in the identity read back (its recorded repro says them).
void identity_options_of_record(case_result& r) {
  r.options.seed = r.seed;
  if (r.v.policy.empty()) return;  // a case refused before judging
  try {
    r.options.pol = parse_policy(r.v.policy);
  } catch (const error&) {
    // a record of an older opval, whose policy text carried a note: the default stays
  }
}

template <class Io, either<shard_position> X>
void describe(Io& io, X& s) {
  io("index", s.index);
  io("count", s.count);
  io("case", s.case_index);
  io("cases", s.cases);
  io("shard_cases", s.shard_cases);
}

template <class Io, either<case_choice> X>
void describe(Io& io, X& c) {
  io("rank", c.rank);
  io("why", c.why);
}

template <class Io, either<verification> X>
void describe(Io& io, X& v) {
  io("method", v.method);
  io.optional("sample", v.sample, !v.sample.empty());
  io.optional("checksums", v.checksums, !v.checksums.empty());
  io.optional("why", v.why, !v.why.empty());
}

template <class Io, either<case_result> X>
void describe(Io& io, X& r) {
  int version = result_schema_version;
  io("schema_version", version);
  check_schema_version(version);
  io("descriptor", r.descriptor);
  io("op", r.op);
  io("seed", r.seed);
  io("contract", r.contract);
  io("backend", r.backend);
  io("backend_version", r.backend_version);
  io("implementation", r.exec.implementation);
  io("actual_contract", r.exec.actual_contract);
  io("observed_contract", r.observed_contract);
  io("observed_precision", r.observed_note);
  io.optional("reference", r.reference, !r.reference.empty());  // only with an alternative reference
  io.optional("reference_note", r.reference_note, !r.reference_note.empty());
  io("state", r.v.st);
  io("reason", r.v.reason);
  io("policy", r.v.policy);
  io.optional("policy_note", r.v.policy_note, !r.v.policy_note.empty());  // only when a fallback was taken
  io("outputs", r.v.outputs);
  io("timings", r.times);
  io.optional("memory", r.memory, true);  // absent from records written before the memory checks
  io.computed("repro", r.repro, [&] { return repro_of(r); });
  io("source", r.source);
  io.optional("not_applicable", r.not_applicable, !r.not_applicable.empty());  // judged tensors only
  // Only for a case listed in the run's known-failures file: its cause (possibly empty).
  io.optional("known_failure", r.known_failure, r.known_failure.has_value());
  io.optional("shard", r.shard, r.shard.has_value());  // only in a sharded run's records
  io.optional("selection", r.choice, r.choice.has_value());  // only in a run with a time budget
  // Only when not verified in full, or when sampled verification was asked for and fell back to full.
  io.optional("verification", r.verified, r.verified.method != "full" || !r.verified.why.empty());
  io.written("opval", [] { return json{{"version", build::version}, {"git_sha", build::git_sha}}; });
}

}  // namespace

std::string to_json_line(const case_result& r) {
  // Replace, not throw, on invalid UTF-8: a record must never be lost to a stray byte.
  return json_writer::value(r).dump(-1, ' ', false, json::error_handler_t::replace);
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
    case_result r;
    json_reader::read(j, r);
    identity_options_of_record(r);
    return r;
  } catch (const json::exception& e) {
    throw error(std::string("result record has a field of the wrong type: ") + e.what());
  }
}

}  // namespace opval
