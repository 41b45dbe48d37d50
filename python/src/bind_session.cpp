// The session's option table (opval/session.hpp) in Python: the keywords of opval.run,
// opval.check and opval.judge, their defaults and help, and RunOptions made from keywords
// through the same fields the CLI sets.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <streambuf>

#include <fmt/format.h>

#include "core/case_selection.hpp"
#include "core/tiers.hpp"
#include "history/history_report.hpp"
#include "backend_handle.hpp"
#include "bindings.hpp"
#include "opval/error.hpp"
#include "core/isolation.hpp"
#include "core/shards.hpp"
#include "opval/session.hpp"
#include "report/html_report.hpp"

namespace opval::python {
namespace {

constexpr const char* stage_name(option_stage s) {
  switch (s) {
    case option_stage::selection: return "selection";
    case option_stage::backends: return "backends";
    case option_stage::per_case: return "per_case";
    case option_stage::session: return "session";
    case option_stage::bench: return "bench";
  }
  return "?";
}

std::vector<std::string> names_of_bits(unsigned bits, const std::vector<std::pair<unsigned, const char*>>& names) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : names)
    if (bits & bit) out.emplace_back(name);
  return out;
}

/// The default of an option as Python sees it: the value a keyword takes (a negated flag's
/// keyword is the field itself: perturb=True).
nb::object default_of(const option_def& d) {
  session_plan plan;
  return std::visit(
      [&]<class T>(plan_field<T> field) -> nb::object {
        const T& value = field(plan);
        if constexpr (std::is_same_v<T, policy>) return nb::str("bound");
        else if constexpr (std::is_same_v<T, guard_side>) return nb::bool_(value == guard_side::before);
        else return nb::cast(value);
      },
      d.field);
}

template <class T>
constexpr const char* kind_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, int>) return "int";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, double>) return "float";
  else if constexpr (std::is_same_v<T, std::string>) return "str";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return "list[str]";
  else if constexpr (std::is_same_v<T, std::vector<int>>) return "list[int]";
  else if constexpr (std::is_same_v<T, policy>) return "policy";
  else return "guard_side";
}

nb::dict describe(const option_def& d) {
  nb::dict out;
  out["flag"] = std::string(d.flag);
  out["keyword"] = std::string(d.keyword);
  out["value_name"] = std::string(d.value_name);
  out["help"] = std::string(d.help);
  out["stage"] = stage_name(d.stage);
  out["commands"] = names_of_bits(d.commands, {{for_run, "run"}, {for_repro, "repro"}, {for_bench, "bench"}, {for_judge, "judge"}});
  out["python"] = names_of_bits(d.python, {{in_opval_run, "run"}, {in_opval_check, "check"}, {in_opval_judge, "judge"}});
  out["default"] = default_of(d);
  out["kind"] = std::visit([]<class T>(plan_field<T>) { return kind_name<T>(); }, d.field);
  out["negated"] = d.negated;
  out["min"] = d.min;  // the range opval run checks numbers against
  out["max"] = d.max;
  out["choices"] = std::string(d.choices);
  out["delimiter"] = d.delimiter ? std::string(1, d.delimiter) : std::string();
  return out;
}

void set_keyword(session_plan& plan, const option_def& d, nb::handle value) {
  std::visit(
      [&]<class T>(plan_field<T> field) {
        T& target = field(plan);
        if constexpr (std::is_same_v<T, policy>) target = parse_policy(nb::cast<std::string>(value));
        else if constexpr (std::is_same_v<T, guard_side>) target = nb::cast<bool>(value) ? guard_side::before : guard_side::after;
        else target = nb::cast<T>(value);
      },
      d.field);
}

/// RunOptions from per-case keywords (policy, seed, worst, the checks); another keyword is a
/// ValueError naming it. The reference is the caller's to set (a Backend object, in Python).
run_options run_options_from(const nb::dict& keywords) {
  session_plan plan;
  for (const auto& [key, value] : keywords) {
    const std::string name = nb::cast<std::string>(key);
    const auto& table = session_option_table();
    const auto d = std::find_if(table.begin(), table.end(), [&](const option_def& o) {
      return o.stage == option_stage::per_case && o.keyword == name;
    });
    if (d == table.end()) throw error(fmt::format("unknown case option '{}'", name));
    try {
      set_keyword(plan, *d, value);
    } catch (const nb::cast_error&) {
      throw error(fmt::format("option {}: cannot take {}", name, nb::cast<std::string>(nb::repr(value))));
    }
  }
  return plan.run;
}

/// A stream whose complete lines go to a Python file object's write() as they are made, so a
/// session's table shows case by case (the GIL is taken for each write). A write that raises
/// (a closed file, a broken pipe) throws out of the stream (whose badbit raises, see
/// python_run_session), so the session stops with Python's exception instead of going on
/// unseen.
class python_lines final : public std::streambuf {
 public:
  explicit python_lines(nb::object file) : file_(std::move(file)) {}
  ~python_lines() override {
    try {
      flush_lines(true);
    } catch (...) {
      // the session already ended with an exception, or the caller's file refuses the tail
    }
  }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    pending_ += static_cast<char>(c);
    if (c == '\n') flush_lines(false);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<std::size_t>(n));
    if (pending_.find('\n') != std::string::npos) flush_lines(false);
    return n;
  }
  int sync() override {
    flush_lines(true);
    return 0;
  }

 private:
  void flush_lines(bool all) {
    const std::size_t end = all ? pending_.size() : pending_.rfind('\n') + 1;
    if (end == 0 || pending_.empty()) return;
    nb::gil_scoped_acquire gil;
    file_.attr("write")(pending_.substr(0, end));
    pending_.erase(0, end);
  }
  nb::object file_;
  std::string pending_;
};

/// How one backend's cases run in a Python session: a Python callable (a framework adapter in
/// the Python worker process), else opval's worker process when given and the backend can be
/// made there, else this process; and, for Python's own backends, the repro in Python's words.
struct python_route {
  nb::object run;  ///< None, or run(problem, source) -> CaseResult
  std::optional<repro_style> style;
  repro_names names;
};

class python_session_executor final : public case_executor {
 public:
  python_session_executor(case_worker* worker, std::map<const backend*, python_route> routes)
      : worker_(worker), routes_(std::move(routes)) {}
  std::unique_ptr<backend> make(const backend_ref&, bool) override {
    throw error("the Python layer makes a Python session's backends");
  }
  case_result run(const located_problem& lp, const session_backend& sb, const run_options& o) override {
    {  // Ctrl-C between cases stops the session, as it stops a Python loop
      nb::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
    }
    const python_route& route = routes_.at(sb.b.get());
    case_result r = run_on_route(route, lp, sb, o);
    if (route.style) {
      case_identity id = r;
      id.options = o;
      id.options.reference.reset();
      r.repro = render_repro(id, *route.style, route.names);
    }
    return r;
  }

 private:
  case_result run_on_route(const python_route& route, const located_problem& lp, const session_backend& sb,
                           const run_options& o) {
    if (!route.run.is_none()) {
      nb::gil_scoped_acquire gil;
      return nb::cast<case_result>(route.run(lp.prob, lp.source));
    }
    if (worker_ && !sb.ref.empty()) return worker_->run(lp, sb.ref, *sb.b, o);
    return run_case_caught(lp, *sb.b, o, sb.ref);
  }
  case_worker* worker_;
  std::map<const backend*, python_route> routes_;
};

/// Collects a session's results and summary for the Python caller.
class collecting_reporter final : public reporter {
 public:
  void on_result(const case_result& r) override { results.push_back(r); }
  void on_finish(const run_summary& s) override { summary = s; }
  std::vector<case_result> results;
  run_summary summary;
};

std::optional<repro_style> style_named(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name == "python_run") return repro_style::python_run;
  if (name == "python_check") return repro_style::python_check;
  if (name == "cli") return repro_style::cli;
  throw error("unknown repro style '" + name + "' (known: cli python_run python_check)");
}

using route_tuple = std::tuple<nb::object, std::string, std::string, std::string, std::string>;
using problem_pair = std::pair<problem, std::string>;

/// Runs session(table, notes) without the GIL: the table to out(text), then the notes to
/// warn(line), one call per line; returns its exit code.
template <class Session>
int with_python_streams(nb::object out, nb::object warn, Session&& session) {
  std::ostringstream notes;
  int code = 0;
  {
    python_lines lines(out);
    std::ostream table(&lines);
    table.exceptions(std::ios::badbit);  // the failed write's exception, rethrown by the stream
    nb::gil_scoped_release unlocked;
    code = session(table, notes);
    table.flush();
  }
  std::istringstream said(notes.str());
  for (std::string line; std::getline(said, line);) warn(line);
  return code;
}

/// The library's run_session for opval.run and opval.check: their backends, each with its route.
nb::tuple python_run_session(const std::vector<problem_pair>& problems, const run_options& o,
                             const std::vector<backend_handle>& backends, const std::vector<route_tuple>& routes,
                             case_worker* worker, nb::object out, nb::object warn, const std::string& jsonl,
                             const std::string& known_failures, bool verbose, const std::string& resume,
                             const std::string& command, const std::vector<op_coverage>& coverage,
                             const std::string& shard, const std::string& history, const std::string& commit,
                             const std::string& tier, const std::string& label, const std::string& budget,
                             const std::string& changes, int seeds) {
  if (routes.size() != backends.size()) throw error("one route per backend");
  std::vector<located_problem> located;
  for (const auto& [p, source] : problems) located.push_back({p, source});
  std::vector<session_backend> session;
  std::map<const backend*, python_route> by_backend;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    session.push_back({backends[i].impl, backends[i].ref});
    const auto& [run, style, backend, reference, keywords] = routes[i];
    by_backend[backends[i].impl.get()] = {run, style_named(style), {backend, reference, keywords}};
  }
  python_session_executor executor(worker, std::move(by_backend));
  collecting_reporter collected;
  const session_options s{.jsonl = jsonl, .resume = resume, .known_failures = known_failures, .verbose = verbose,
                          .shard = shard, .command = command, .history = history, .commit = commit, .tier = tier,
                          .label = label, .budget_seconds = budget.empty() ? 0 : parse_budget(budget),
                          .changes = changes, .seeds = std::max(seeds, 1), .also = &collected, .coverage = coverage};
  const int code = with_python_streams(out, warn, [&](std::ostream& table, std::ostream& notes) {
    return run_session(located, o, session, executor, s, table, notes);
  });
  return nb::make_tuple(code, collected.summary, collected.results);
}

/// The library's merge_session for opval.merge.
nb::tuple python_merge_session(const std::vector<std::string>& journals, nb::object out, nb::object warn,
                               const std::string& jsonl, bool verbose, const std::string& history,
                               const std::string& commit, const std::string& tier, const std::string& label) {
  collecting_reporter collected;
  const session_options s{.jsonl = jsonl, .verbose = verbose, .history = history, .commit = commit, .tier = tier,
                          .label = label, .also = &collected};
  const int code = with_python_streams(out, warn, [&](std::ostream& table, std::ostream& notes) {
    return merge_session(journals, s, table, notes);
  });
  return nb::make_tuple(code, collected.summary, collected.results);
}

/// Asks supports() where a Python session's backend runs: opval's worker for one made there,
/// else this process. It runs no case.
class supports_only_executor final : public case_executor {
 public:
  explicit supports_only_executor(case_worker* worker) : worker_(worker) {}
  std::unique_ptr<backend> make(const backend_ref&, bool) override { throw error("makes no backend"); }
  case_result run(const located_problem&, const session_backend&, const run_options&) override {
    throw error("runs no case");
  }
  support supports(const session_backend& sb, const problem& p) override {
    if (worker_ && !sb.ref.empty()) return worker_->supports(sb.ref, p);
    return sb.b->supports(p);
  }

 private:
  case_worker* worker_;
};

/// generate_session_suite for Python's backends: (problems with their sources, coverage).
nb::tuple python_generate_suite(const std::vector<std::string>& ops, const std::vector<std::string>& contracts,
                                const std::vector<backend_handle>& backends, case_worker* worker, std::uint64_t seed,
                                int budget) {
  std::vector<session_backend> session;
  for (const backend_handle& b : backends) session.push_back({b.impl, b.ref});
  supports_only_executor executor(worker);
  session_suite suite;
  {
    nb::gil_scoped_release unlocked;  // a Python kernel's supports() takes it back
    suite = generate_session_suite({.tag = std::string(generated_tag), .suite_budget = budget, .ops = ops,
                                    .contracts = contracts},
                                   session, executor, seed);
  }
  std::vector<std::pair<problem, std::string>> problems;
  for (located_problem& lp : suite.problems) problems.emplace_back(std::move(lp.prob), std::move(lp.source));
  return nb::make_tuple(problems, suite.coverage);
}

}  // namespace

void bind_session(nb::module_& m) {
  m.attr("GENERATED_TAG") = std::string(generated_tag);
  nb::class_<op_coverage>(m, "Coverage", "what a generated suite covers of one op on one backend (docs/COVERAGE.md)")
      .def_ro("op", &op_coverage::op)
      .def_ro("backend", &op_coverage::backend)
      .def_prop_ro("values_covered", &op_coverage::values_covered, "values that ran alone at some contract")
      .def_prop_ro("values", [](const op_coverage& c) { return c.values.size(); }, "values in the op's feature table")
      .def("json", &coverage_json, "the JSON Lines record {\"coverage\": ...}, one line")
      .def(
          "text",
          [](const op_coverage& c, bool verbose, int width) {
            std::ostringstream out;
            print_coverage({c}, verbose, width, out);
            return out.str();
          },
          nb::arg("verbose") = false, nb::arg("width") = 100, "the report as the console prints it");
  m.def("generate_suite", &python_generate_suite, nb::arg("ops"), nb::arg("contracts"), nb::arg("backends"),
        nb::arg("worker").none(), nb::arg("seed") = 1, nb::arg("budget") = 200,
        "the generated suites of `ops` (every op's when empty) for `backends`, asking supports() in opval's `worker` "
        "for a backend made there; returns (problems with their sources, list of Coverage) (docs/COVERAGE.md)");
  m.def("session_options", [] {
    nb::list out;
    for (const option_def& d : session_option_table()) out.append(describe(d));
    return out;
  }, "every option of a session, as the CLI and the Python layer take it: flag, keyword, value_name, help, stage, "
     "commands, python (the functions taking the keyword), default, kind (its value's type), negated, choices, delimiter");
  m.def("run_options", &run_options_from, nb::arg("keywords"),
        "RunOptions from the per-case keywords (policy, seed, worst, perturb, guard, guard_before, poison, "
        "input_check, threads, leak_check), set as the CLI sets its options");
  m.def("run_session", &python_run_session, nb::arg("problems"), nb::arg("options"), nb::arg("backends"),
        nb::arg("routes"), nb::arg("worker").none(), nb::arg("out"), nb::arg("warn"), nb::arg("jsonl") = "",
        nb::arg("known_failures") = "", nb::arg("verbose") = false, nb::arg("resume") = "", nb::arg("command") = "",
        nb::arg("coverage") = std::vector<op_coverage>{}, nb::arg("shard") = "", nb::arg("history") = "",
        nb::arg("commit") = "", nb::arg("tier") = "", nb::arg("label") = "", nb::arg("budget") = "",
        nb::arg("changes") = "", nb::arg("seeds") = 1,
        "the library's session (opval/session.hpp) over `backends`: the reporters on `out`, the journal, known "
        "failures, the summary; `routes` says per backend (run, repro style, backend name, reference name, "
        "keywords): a callable run(problem, source) for a backend of the Python worker, else opval's `worker` "
        "(None: this process), and the repro in Python's words. Returns (exit code, summary, results); the "
        "session's notes go to warn(line). `resume` finishes a journal; `command` is what an interrupted run "
        "says to resume with (exit code 128 + the signal); `coverage`, a generated suite's, is reported before the "
        "closing line and journaled first; `shard` ('I/N' or 'auto') runs one shard of the cases; `history` records "
        "the run (with `commit`, `tier`, `label`) and gives `budget` (a duration: choose the cases that fit, "
        "most important first; `changes` a git revision or file of paths) its recorded costs and verdicts; "
        "`seeds` runs each case at that many seeds");
  m.def(
      "apply_tier",
      [](const std::string& tier, const std::string& tag, int seeds, const std::string& budget) {
        const tier_choice c = apply_tier(tier, tag, seeds, budget);
        return nb::make_tuple(c.tag, c.seeds, c.budget);
      },
      nb::arg("tier"), nb::arg("tag"), nb::arg("seeds"), nb::arg("budget"),
      "(tag, seeds, budget) of a run: those given ('', 0, '' when not), else the tier's (smoke, regression, "
      "nightly), else smoke, 1 and no budget (core/tiers.hpp)");
  m.def("parse_budget", &parse_budget, nb::arg("text"), "a duration ('10m', '1h30m', '90s', '600') in seconds");
  m.def(
      "history_answer",
      [](const std::string& database, const std::string& what, const std::string& op, const std::string& backend,
         const std::string& text, std::size_t limit, const std::string& metric, bool all, int recent) {
        if (metric != "latency" && metric != "case-time") throw error("metric must be 'latency' or 'case-time'");
        std::ostringstream out;
        answer_history({.what = what, .database = database, .filter = {op, backend, text, limit},
                        .metric = metric == "latency" ? trend_metric::latency : trend_metric::case_time,
                        .all = all, .json = true, .recent = recent},
                       out);
        return out.str();
      },
      nb::arg("database"), nb::arg("what"), nb::arg("op") = "", nb::arg("backend") = "", nb::arg("text") = "",
      nb::arg("limit") = 20, nb::arg("metric") = "latency", nb::arg("all") = false, nb::arg("recent") = 5,
      "`opval history WHAT --json` on the history `database` (history/history_report.hpp): one JSON array");
  m.def(
      "record_history",
      [](const std::string& database, const std::vector<std::string>& files, const std::string& commit,
         const std::string& tier, const std::string& label) {
        std::ostringstream said;
        return record_history_files(database, files, {.commit = commit, .tier = tier, .label = label}, said);
      },
      nb::arg("database"), nb::arg("files"), nb::arg("commit") = "", nb::arg("tier") = "", nb::arg("label") = "",
      "`opval history record`: each journal or bench file recorded as one run; returns the runs' ids");
  m.def("estimated_case_cost", &estimated_case_cost, nb::arg("problem"),
        "what a case of `problem` is expected to cost, in the units `--shard` balances (core/shards.hpp)");
  m.def(
      "assign_shards",
      [](const std::vector<double>& costs, std::int64_t count) {
        if (count < 1) throw error("assign_shards: count must be at least 1");
        return assign_shards(costs, count);
      },
      nb::arg("costs"), nb::arg("count"),
      "the shard of each case as `--shard` assigns them: the most costly first, each to the least loaded shard");
  m.def(
      "write_html_report",
      [](const std::vector<std::string>& journals, const std::vector<std::string>& bench, const std::string& output,
         const std::string& title,
         const std::vector<std::tuple<std::string, std::string, std::vector<std::pair<std::string, double>>>>& trends,
         const std::string& history) {
        report_sources sources{journals, bench, {}, title};
        for (const auto& [name, unit, points] : trends) sources.trends.push_back({name, unit, points});
        if (!history.empty())
          for (trend_series& t : history_trend_series(history)) sources.trends.push_back(std::move(t));
        return write_html_report(sources, output);
      },
      nb::arg("journals"), nb::arg("bench"), nb::arg("output"), nb::arg("title") = "opval report",
      nb::arg("trends") = std::vector<std::tuple<std::string, std::string, std::vector<std::pair<std::string, double>>>>{},
      nb::arg("history") = "",
      "the HTML report (report/html_report.hpp) of run journals and bench records, written to `output`; trends: "
      "(case, unit, [(run label, value)]) per case, and those of the run history `history`; returns what it "
      "holds, in words");
  m.def("merge_session", &python_merge_session, nb::arg("journals"), nb::arg("out"), nb::arg("warn"),
        nb::arg("jsonl") = "", nb::arg("verbose") = false, nb::arg("history") = "", nb::arg("commit") = "",
        nb::arg("tier") = "", nb::arg("label") = "",
        "the library's merge (opval/session.hpp) of a sharded run's journals: the reporters on `out`, the merged "
        "journal `jsonl`; returns (exit code, summary, results in the whole run's order); notes go to warn(line)");
}

}  // namespace opval::python
