#pragma once
// The lines a runner and its worker process exchange (private to src/core). Runner -> worker:
// one JSON object per case (request_line). Worker -> runner: `R <record>` with the case's
// JSON record (to_json_line), or `N <text>` notes sent before a crash (a guard-page hit).
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <string_view>
#include <variant>

#include "core/isolation.hpp"

namespace opval::detail {

/// One case as the worker receives it.
struct case_request {
  located_problem lp;
  backend_ref ref;
  run_options opts;
};

/// The request as one line (no newline). Every field of run_options travels: a field added
/// there must be added here and in parse_request. An alternative reference travels as its
/// backend_ref (the worker makes it); one without (made in Python) throws opval::error.
std::string request_line(const located_problem& lp, const backend_ref& ref, const run_options& o);

/// A request to make a backend, keep it, and say who it is (no case is run): the parent
/// vets a plugin's loading this way, and never loads it itself (isolation.hpp).
struct describe_request {
  backend_ref ref;
};
std::string describe_line(const backend_ref& ref);

/// The answer to a describe request, as one line (no newline), and its inverse.
std::string identity_line(const backend_identity& id);
backend_identity parse_identity(std::string_view line);

/// A request to judge arrays read from files (judge_files): the whole judgement, the file
/// reading and the alternative reference included, runs in the worker; the answer is a record.
struct judge_request {
  problem prob;
  std::vector<std::string> inputs, outputs;
  run_options opts;
};
std::string judge_request_line(const problem& p, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs, const run_options& o);

/// A request for the worker's backend catalog, loading every module but those of `skip` (by
/// name, with the reason they are unavailable: they crashed an earlier worker); the answer as
/// one line and its inverse.
struct catalog_request {
  std::map<std::string, std::string> skip;
};
std::string catalog_request_line(const std::map<std::string, std::string>& skip);
std::string catalog_line(const backend_catalog& c);
backend_catalog parse_catalog(std::string_view line);

/// A request for a backend's supports() answer on one problem (a generated suite asks many);
/// the answer as one line and its inverse.
struct supports_request {
  backend_ref ref;
  problem prob;
};
std::string supports_request_line(const backend_ref& ref, const problem& p);
std::string support_line(const support& s);
support parse_support(std::string_view line);

/// Any request, read from its line in one parse: the inverse of request_line, describe_line,
/// judge_request_line, catalog_request_line and supports_request_line. Throws opval::error on a malformed line.
using worker_request = std::variant<case_request, describe_request, judge_request, catalog_request, supports_request>;
worker_request parse_worker_request(std::string_view line);

inline constexpr std::string_view result_prefix = "R ";
inline constexpr std::string_view identity_prefix = "B ";
inline constexpr std::string_view note_prefix = "N ";
inline constexpr std::string_view catalog_prefix = "C ";
inline constexpr std::string_view support_prefix = "S ";
/// The note a worker sends before it loads a backend module (its file follows).
inline constexpr std::string_view loading_note = "loading backend module ";

}  // namespace opval::detail
