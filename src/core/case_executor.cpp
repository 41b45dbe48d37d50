#include "opval/session.hpp"
#include "core/isolation.hpp"

#include <set>

#include "opval/error.hpp"
#include "opval/judge.hpp"
#include "backends/plugin/plugin_backend.hpp"

namespace opval {
namespace {

std::unique_ptr<backend> make_here(const backend_ref& ref) {
  return ref.plugin_path.empty() ? make_backend(ref.name) : load_plugin_backend(ref.plugin_path);
}

// Cases in this process: a crash ends it (--isolation none).
class in_process final : public case_executor {
 public:
  std::unique_ptr<backend> make(const backend_ref& ref, bool) override { return make_here(ref); }
  case_result run(const located_problem& lp, const session_backend& sb, const run_options& o) override {
    return run_case_caught(lp, *sb.b, o, sb.ref);
  }
};

// Cases in a worker process, kept from case to case (core/isolation.hpp).
class in_worker final : public case_executor {
 public:
  explicit in_worker(double timeout_seconds) : worker_(isolation_options{.timeout_seconds = timeout_seconds}) {}
  std::unique_ptr<backend> make(const backend_ref& ref, bool here) override {
    backend_identity id = worker_.describe(ref);
    return here ? make_here(ref) : remote_backend(std::move(id));
  }
  case_result run(const located_problem& lp, const session_backend& sb, const run_options& o) override {
    return worker_.run(lp, sb.ref, *sb.b, o);
  }
  support supports(const session_backend& sb, const problem& p) override { return worker_.supports(sb.ref, p); }
  case_result judge(const problem& p, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                    const run_options& o) override {
    return worker_.judge(p, inputs, outputs, o);
  }

 private:
  case_worker worker_;
};

}  // namespace

support case_executor::supports(const session_backend& sb, const problem& p) { return sb.b->supports(p); }

case_result case_executor::judge(const problem& p, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const run_options& o) {
  return judge_files(p, inputs, outputs, o);
}

std::unique_ptr<case_executor> make_executor(const std::string& isolation, double timeout_seconds) {
  if (isolation == "process") return std::make_unique<in_worker>(timeout_seconds);
  if (isolation == "none") return std::make_unique<in_process>();
  throw error("unknown isolation '" + isolation + "' (known: process none)");
}

backend_ref backend_ref_of(const std::string& text) {
  const bool plugin = text.ends_with(".so") || text.find('/') != std::string::npos;
  return plugin ? backend_ref{"", text} : backend_ref{text, ""};
}

std::vector<session_backend> make_session_backends(const std::vector<std::string>& names, const std::string& plugin,
                                                   case_executor& executor, bool here) {
  std::vector<backend_ref> refs;
  std::set<std::string> seen;
  for (const std::string& name : names)
    if (seen.insert(name).second) refs.push_back({name, ""});
  if (names.empty() && plugin.empty()) refs.push_back({"sim", ""});
  if (!plugin.empty()) refs.push_back({"", plugin});
  std::vector<session_backend> out;
  for (const backend_ref& ref : refs) out.push_back({executor.make(ref, here), ref});
  return out;
}

std::string names_of(const std::vector<session_backend>& backends) {
  std::string names;
  for (const session_backend& sb : backends) {
    if (!names.empty()) names += ',';
    names += sb.b->name();  // appended in place: GCC 12 flags the temporary of a concatenation (-Wrestrict)
  }
  return names;
}

}  // namespace opval
