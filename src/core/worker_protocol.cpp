// Encoding of the runner -> worker requests (see worker_protocol.hpp).
#include "core/worker_protocol.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <vector>

#include "opval/error.hpp"
#include "opval/session.hpp"

namespace opval::detail {
namespace {

using json = nlohmann::json;

// Policies travel field by field, not as text, so that no parameter is lost to formatting.
json policy_json(const policy& p) {
  return json{{"kind", static_cast<int>(p.kind)}, {"false_alarm", p.false_alarm}, {"random_data", p.random_data},
              {"sim_factor", p.sim_factor}, {"rtol", p.rtol},  {"atol", p.atol}, {"bias_z", p.bias_z}, {"bias_min_ulps", p.bias_min_ulps}};
}

policy policy_from(const json& j) {
  policy p;
  p.kind = static_cast<policy_kind>(j.at("kind").get<int>());
  j.at("false_alarm").get_to(p.false_alarm);
  j.at("random_data").get_to(p.random_data);
  j.at("sim_factor").get_to(p.sim_factor);
  j.at("rtol").get_to(p.rtol);
  j.at("atol").get_to(p.atol);
  j.at("bias_z").get_to(p.bias_z);
  j.at("bias_min_ulps").get_to(p.bias_min_ulps);
  return p;
}

// An alternative reference travels as the way to make it; the worker makes it (worker.cpp).
json reference_json(const std::optional<alternative_reference>& r) {
  if (!r) return nullptr;
  if (r->ref.empty())
    throw error(fmt::format("the reference {} was made in this process and cannot run in a worker process "
                            "(name a registered backend or a plugin, or run without isolation)", r->name()));
  return json{{"backend", r->ref.name}, {"plugin", r->ref.plugin_path}, {"float64", r->float64}};
}

std::optional<alternative_reference> reference_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  alternative_reference r;
  j.at("backend").get_to(r.ref.name);
  j.at("plugin").get_to(r.ref.plugin_path);
  j.at("float64").get_to(r.float64);
  return r;
}

// The per-case options travel under their keywords, as session_option_table() lists them: an
// option added there travels without a change here.
json encoded(const policy& p) { return policy_json(p); }
json encoded(guard_side side) { return side == guard_side::before; }
template <class T>
json encoded(const T& value) {
  return value;
}

void decode(const json& j, policy& p) { p = policy_from(j); }
void decode(const json& j, guard_side& side) { side = j.get<bool>() ? guard_side::before : guard_side::after; }
template <class T>
void decode(const json& j, T& value) {
  j.get_to(value);
}

json options_json(const run_options& o) {
  session_plan plan;
  plan.run = o;
  json j{{"backend", o.backend}, {"reference", reference_json(o.reference)}};
  for (const option_def& d : session_option_table())
    if (d.stage == option_stage::per_case)
      std::visit([&](auto field) { j[std::string(d.keyword)] = encoded(field(plan)); }, d.field);
  return j;
}

run_options options_from(const json& j) {
  session_plan plan;
  for (const option_def& d : session_option_table())
    if (d.stage == option_stage::per_case)
      std::visit([&](auto field) { decode(j.at(std::string(d.keyword)), field(plan)); }, d.field);
  j.at("backend").get_to(plan.run.backend);
  plan.run.reference = reference_from(j.at("reference"));
  return plan.run;
}

// Every line is one JSON object, without newlines; text that is not UTF-8 is replaced, not thrown on.
std::string line_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A worker's answer, read by `read` from its line; `what` names the answer in the error.
template <class Read>
auto read_answer(std::string_view line, std::string_view what, Read read) {
  try {
    return read(json::parse(line));
  } catch (const json::exception& e) {
    throw error(fmt::format("unreadable {} from the worker: {}", what, e.what()));
  }
}

// A request is told by its one key; a case request has none of them.
worker_request request_from(const json& j) {
  if (j.contains("describe")) {
    const json& d = j.at("describe");
    return describe_request{{d.at("backend").get<std::string>(), d.at("plugin").get<std::string>()}};
  }
  if (j.contains("judge")) {
    const json& r = j.at("judge");
    return judge_request{parse_problem(r.at("descriptor").get<std::string>()), r.at("inputs").get<std::vector<std::string>>(),
                         r.at("outputs").get<std::vector<std::string>>(), options_from(r.at("options"))};
  }
  if (j.contains("catalog")) return catalog_request{j.at("catalog").at("skip").get<std::map<std::string, std::string>>()};
  if (j.contains("supports")) {
    const json& r = j.at("supports");
    return supports_request{{r.at("backend").get<std::string>(), r.at("plugin").get<std::string>()},
                            parse_problem(r.at("descriptor").get<std::string>())};
  }
  return case_request{{parse_problem(j.at("descriptor").get<std::string>()), j.at("source").get<std::string>()},
                      {j.at("backend").get<std::string>(), j.at("plugin").get<std::string>()},
                      options_from(j.at("options"))};
}

}  // namespace

std::string request_line(const located_problem& lp, const backend_ref& ref, const run_options& o) {
  return line_of({{"descriptor", lp.prob.to_string()},
                  {"source", lp.source},
                  {"backend", ref.name},
                  {"plugin", ref.plugin_path},
                  {"options", options_json(o)}});
}

std::string describe_line(const backend_ref& ref) {
  return line_of({{"describe", {{"backend", ref.name}, {"plugin", ref.plugin_path}}}});
}

std::string identity_line(const backend_identity& id) { return line_of({{"name", id.name}, {"version", id.version}}); }

backend_identity parse_identity(std::string_view line) {
  return read_answer(line, "backend identity", [](const json& j) {
    return backend_identity{j.at("name").get<std::string>(), j.at("version").get<std::string>()};
  });
}

std::string judge_request_line(const problem& p, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs, const run_options& o) {
  return line_of(
      {{"judge", {{"descriptor", p.to_string()}, {"inputs", inputs}, {"outputs", outputs}, {"options", options_json(o)}}}});
}

std::string supports_request_line(const backend_ref& ref, const problem& p) {
  return line_of({{"supports", {{"backend", ref.name}, {"plugin", ref.plugin_path}, {"descriptor", p.to_string()}}}});
}

std::string support_line(const support& s) {
  return line_of({{"ok", s.ok}, {"state", std::string(to_string(s.st))}, {"reason", s.reason}});
}

support parse_support(std::string_view line) {
  return read_answer(line, "supports() answer", [](const json& j) {
    const std::optional<state> st = parse_state(j.at("state").get<std::string>());
    if (!st) throw error("unreadable supports() answer from the worker: unknown state");
    return support{j.at("ok").get<bool>(), *st, j.at("reason").get<std::string>()};
  });
}

std::string catalog_request_line(const std::map<std::string, std::string>& skip) {
  return line_of({{"catalog", {{"skip", skip}}}});
}

std::string catalog_line(const backend_catalog& c) {
  return line_of({{"backends", c.names}, {"unloadable", c.unloadable}});
}

backend_catalog parse_catalog(std::string_view line) {
  return read_answer(line, "backend catalog", [](const json& j) {
    return backend_catalog{j.at("backends").get<std::vector<std::string>>(),
                           j.at("unloadable").get<std::map<std::string, std::string>>()};
  });
}

worker_request parse_worker_request(std::string_view line) {
  try {
    return request_from(json::parse(line));
  } catch (const json::exception& e) {
    throw error(std::string("malformed worker request: ") + e.what());
  }
}

}  // namespace opval::detail
