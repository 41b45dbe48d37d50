// The one repro renderer (opval/runner.hpp): a case identity as a shell command or a Python
// call. Every descriptor and path is quoted (shell_quote.hpp), so it survives being pasted.
#include <fmt/format.h>

#include "core/shell_quote.hpp"
#include "opval/runner.hpp"
#include "opval/session.hpp"

namespace opval {
namespace {

/// A Python string literal: single quotes, backslashes and quotes escaped.
std::string python_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

/// How the shell names a backend again: `--plugin PATH` for a plugin, else `--backend NAME`.
std::string backend_argument(const case_identity& id, const repro_names& names) {
  if (!names.backend.empty()) return "--backend " + detail::shell_word(names.backend);
  if (!id.made_from.plugin_path.empty()) return "--plugin " + detail::shell_quote(id.made_from.plugin_path);
  return "--backend " + detail::shell_word(id.backend);
}

/// The reference as the caller gave it, or as a worker makes it again (a plugin by its path).
std::string reference_text(const case_identity& id, const repro_names& names) {
  if (!names.reference.empty()) return names.reference;
  if (!id.reference_from.plugin_path.empty()) return id.reference_from.plugin_path;
  return id.reference_from.name;
}

std::string cli_repro(const case_identity& id, const repro_names& names) {
  const std::string policy = detail::shell_word(id.options.pol.to_string());
  const std::string reference = reference_text(id, names);
  const std::string reference_argument = reference.empty() ? "" : " --reference " + detail::shell_word(reference);
  if (!id.input_files.empty()) {  // a judged case: its files, not a kernel run
    std::string cmd = "opval judge " + detail::shell_quote(id.descriptor);
    for (const std::string& f : id.input_files) cmd += " --inputs " + detail::shell_quote(f);
    for (const std::string& f : id.output_files) cmd += " --outputs " + detail::shell_quote(f);
    cmd += " --policy " + policy;
    if (id.options.worst_k != run_options{}.worst_k) cmd += fmt::format(" --worst {}", id.options.worst_k);
    return cmd + reference_argument;
  }
  return fmt::format("opval repro {} --seed {} {} --policy {}", detail::shell_quote(id.descriptor), id.seed,
                     backend_argument(id, names), policy) +
         reference_argument + changed_case_options(id.options, false) +
         (id.under.empty() ? "" : " --under " + id.under);
}

/// Seed and policy only when they differ from their defaults: the Python callers' defaults.
std::string python_run_repro(const case_identity& id, const repro_names& names) {
  std::string cmd = fmt::format("python -m opval run {} --problems {}", backend_argument(id, names),
                                detail::shell_quote(id.descriptor));
  if (const std::string policy = id.options.pol.to_string(); policy != run_options{}.pol.to_string())
    cmd += " --policy " + detail::shell_word(policy);
  if (id.seed != run_options{}.seed) cmd += fmt::format(" --seed {}", id.seed);
  cmd += changed_case_options(id.options, false);
  if (const std::string reference = reference_text(id, names); !reference.empty())
    cmd += " --reference " + detail::shell_word(reference);
  return cmd + " -v";
}

std::string python_check_repro(const case_identity& id, const repro_names& names) {
  std::string call = fmt::format("opval.check({}, {}, problems=[{}]", python_string(id.op),
                                 names.backend.empty() ? id.backend : names.backend, python_string(id.descriptor));
  if (const std::string policy = id.options.pol.to_string(); policy != run_options{}.pol.to_string())
    call += ", policy=" + python_string(policy);
  if (id.seed != run_options{}.seed) call += fmt::format(", seed={}", id.seed);
  call += changed_case_options(id.options, true);
  if (!names.keywords.empty()) call += ", " + names.keywords;
  if (const std::string reference = reference_text(id, names); !reference.empty())
    call += ", reference=" + python_string(reference);
  return call + ", verbose=True)";
}

}  // namespace

case_identity identify(const problem& p, const std::string& backend, const run_options& o,
                       const std::string& source, const backend_ref& made_from) {
  case_identity id;
  id.descriptor = p.to_string();
  id.op = std::string(p.op());
  id.contract = p.dt.types_string();
  id.seed = o.seed;
  id.backend = backend;
  id.made_from = made_from;
  if (o.reference) {
    id.reference = o.reference->name();
    id.reference_from = o.reference->ref;
  }
  id.options = o;
  id.options.backend.clear();
  id.options.reference.reset();
  id.source = source;
  return id;
}

std::string repro_of(const case_result& r) { return r.repro.empty() ? render_repro(r) : r.repro; }

std::string render_repro(const case_identity& id, repro_style style, const repro_names& names) {
  switch (style) {
    case repro_style::python_run: return python_run_repro(id, names);
    case repro_style::python_check: return python_check_repro(id, names);
    case repro_style::cli: break;
  }
  return cli_repro(id, names);
}

}  // namespace opval
