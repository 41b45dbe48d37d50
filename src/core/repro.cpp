#include "core/repro.hpp"

#include <fmt/format.h>

#include "core/shell_quote.hpp"

namespace opval::detail {
namespace {

// " --reference NAME" (a plugin by its quoted path), or nothing without an alternative reference.
std::string reference_argument(const run_options& o) {
  if (!o.reference || o.reference->ref.empty()) return {};
  const backend_ref& ref = o.reference->ref;
  return " --reference " + (ref.plugin_path.empty() ? ref.name : shell_quote(ref.plugin_path));
}

}  // namespace

std::string case_repro(const problem& p, const run_options& o, const std::string& backend_name) {
  return fmt::format("opval repro {} --seed {} --backend {} --policy {}", shell_quote(p.to_string()), o.seed,
                     backend_name, o.pol.to_string()) +
         reference_argument(o);
}

std::string judge_repro(const problem& p, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const run_options& o) {
  std::string cmd = "opval judge " + shell_quote(p.to_string());
  for (const std::string& f : inputs) cmd += " --inputs " + shell_quote(f);
  for (const std::string& f : outputs) cmd += " --outputs " + shell_quote(f);
  cmd += " --policy " + shell_quote(o.pol.to_string());
  if (o.worst_k != run_options{}.worst_k) cmd += fmt::format(" --worst {}", o.worst_k);
  return cmd + reference_argument(o);
}

}  // namespace opval::detail
