// `opval bench` from a session_plan (opval/session.hpp): the cases of the selection or of its
// sweeps, each checked where --isolation says (a crash is a verdict, and is not timed), then
// timed in this process only if its check PASSED, through the bench reporters.
#include <sstream>
#include <chrono>
#include <iostream>
#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "bench/bench_records.hpp"
#include "history/history.hpp"
#include "bench/bench_report.hpp"
#include "bench/environment.hpp"
#include "opval/error.hpp"
#include "core/known_failures.hpp"
#include "core/output_file.hpp"
#include "opval/session.hpp"
#include "bench/sweep.hpp"
#include "core/threading.hpp"

namespace opval {
namespace {

/// One case of a bench run: a problem on a backend, timed on `threads` OpenMP threads (0: as
/// they are), at a sweep point (empty outside sweeps).
struct bench_job {
  located_problem lp;
  const session_backend* sb = nullptr;
  int threads = 0;
  sweep_point point;
  std::size_t template_index = 0;
};

std::vector<std::vector<std::string>> parse_zips(const std::vector<std::string>& zips) {
  std::vector<std::vector<std::string>> groups;
  for (const std::string& z : zips) {
    groups.emplace_back();
    for (std::size_t start = 0;;) {
      const std::size_t comma = z.find(',', start);
      groups.back().push_back(z.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return groups;
}

/// The thread count of a `threads` axis value.
int threads_value(const std::string& text) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 4096)
    throw error("--axis threads: '" + text + "' is no thread count (1 to 4096)");
  return n;
}

/// `point` without the axes `item` does not use (its placeholders, threads and backend).
sweep_point projected(const sweep_point& point, const std::vector<std::string>& used) {
  sweep_point p;
  for (const auto& value : point.values)
    if (value.first == "threads" || value.first == "backend" ||
        std::find(used.begin(), used.end(), value.first) != used.end())
      p.values.push_back(value);
  return p;
}

void check_axes_are_used(const std::vector<sweep_axis>& axes, const std::vector<std::string>& items) {
  std::set<std::string> used_anywhere;
  for (const std::string& item : items)
    for (const std::string& name : placeholders(item)) used_anywhere.insert(name);
  for (const sweep_axis& axis : axes)
    if (axis.name != "threads" && axis.name != "backend" && !used_anywhere.contains(axis.name))
      throw error("--axis " + axis.name + ": no --problems template uses {" + axis.name + "}");
}

/// The cases of a bench run. Without axes: every selected problem on every backend. With:
/// each --problems item (or each selected problem, when none is given) at each point of the
/// axes it uses, on the point's backend or every backend, with the point's thread count.
std::vector<bench_job> bench_jobs(const session_plan& plan, const std::vector<sweep_axis>& axes,
                                  const std::vector<session_backend>& backends) {
  const int threads = plan.bench.omp_threads;
  std::vector<bench_job> jobs;
  if (axes.empty()) {
    for (const located_problem& lp : select_problems(plan.selection))
      for (const session_backend& sb : backends) jobs.push_back({lp, &sb, threads, {}, 0});
    return jobs;
  }
  const std::vector<sweep_point> points = sweep_points(axes, parse_zips(plan.bench.zips));
  const std::vector<std::string>& items = plan.selection.problems;
  check_axes_are_used(axes, items);
  const auto add = [&](const located_problem& lp, const sweep_point& point, std::size_t template_index) {
    const std::string* point_threads = point.find("threads");
    const std::string* name = point.find("backend");
    for (const session_backend& sb : backends)
      if (!name || sb.b->name() == *name)
        jobs.push_back({lp, &sb, point_threads ? threads_value(*point_threads) : threads, point, template_index});
  };
  if (items.empty())
    for (const located_problem& lp : select_problems(plan.selection))
      for (const sweep_point& point : points) add(lp, point, 0);
  for (std::size_t t = 0; t < items.size(); ++t) {
    const std::vector<std::string> used = placeholders(items[t]);
    std::vector<sweep_point> seen;
    for (const sweep_point& full : points) {
      sweep_point point = projected(full, used);
      if (std::any_of(seen.begin(), seen.end(), [&](const sweep_point& s) { return s.values == point.values; })) continue;
      seen.push_back(point);
      if (used.empty()) {
        for (const located_problem& lp : select_problems({.problems = {items[t]}})) add(lp, point, t);
      } else {
        add({parse_problem(instantiate(items[t], point)), "--problems " + items[t]}, point, t);
      }
    }
  }
  return jobs;
}

bench_options bench_options_of(const bench_settings& s, const run_options& check) {
  if (s.cache != "hot" && s.cache != "cold") throw error("unknown --cache '" + s.cache + "' (known: hot cold)");
  bench_options b;
  b.check = check;
  b.sampling.target_ci = s.target_ci_percent / 100;
  b.sampling.budget_seconds = s.budget;
  b.sampling.min_samples = s.min_samples;
  b.sampling.min_sampling_seconds = s.min_time;
  b.sampling.warmup_seconds = s.warmup;
  b.cache = s.cache == "hot" ? cache_mode::hot : cache_mode::cold;
  b.threads = s.omp_threads;
  b.counters = s.counters;
  b.repetitions = s.repetitions;
  return b;
}

/// `opval bench --machine`: the peaks, as a table, saved for later runs once they pass the
/// hierarchy check; exit 1 when they never do.
int measure_machine(const bench_settings& s, std::ostream& out) {
  check_writable(s.machine_file);
  peak_options po;
  po.array_bytes = s.stream_mib << 20;
  out << fmt::format("opval bench --machine: measuring (the STREAM arrays are {})...\n",
                     s.stream_mib ? fmt::format("{} MiB each", s.stream_mib)
                                  : std::string("4 x the last-level cache each"));
  for (const std::string& w : capture_environment().warnings) out << "opval bench --machine: warning: " << w << '\n';
  out << std::flush;
  return measure_and_save_peaks(po, s.machine_file, out, [&] { return measure_machine_peaks(po); }) ? 0 : 1;
}

/// The bench's environment (its backends' versions included), its warnings said on `out`.
environment bench_environment(const std::vector<session_backend>& backends, std::ostream& out) {
  environment env = capture_environment();
  for (const session_backend& sb : backends) env.libraries[sb.b->name()] = sb.b->version();
  for (const std::string& w : env.warnings) out << "opval bench: warning: " << w << '\n';
  return env;
}

}  // namespace

int bench_plan(const session_plan& given, std::ostream& out) {
  const bench_settings& s = given.bench;
  if (s.machine) return measure_machine(s, out);
  std::vector<sweep_axis> axes;
  for (const std::string& text : s.axes) axes.push_back(parse_axis(text));
  session_plan plan = given;
  for (const sweep_axis& axis : axes)  // a `backend` axis replaces --backend
    if (axis.name == "backend") plan.backends = axis.values;
  // Before any backend or worker exists, so that their threads inherit the CPUs.
  if (!s.affinity.empty()) pin_process_to(parse_cpu_list(s.affinity));
  // The check runs in the executor; the timing here, on backends made here once a worker
  // survived making them.
  const std::unique_ptr<case_executor> executor = make_executor(plan.isolation, plan.timeout);
  run_options o = make_run_options(plan, *executor);
  const std::vector<session_backend> backends = make_session_backends(plan.backends, plan.plugin, *executor, true);
  o.backend = names_of(backends);
  bench_options bo = bench_options_of(s, o);
  const std::vector<bench_job> jobs = bench_jobs(plan, axes, backends);
  std::vector<located_problem> problems;
  for (const bench_job& job : jobs) problems.push_back(job.lp);
  const std::vector<std::string> inputs = input_files(problems, {plan.known_failures});
  check_output_files_differ(plan);
  std::optional<output_file> jsonl, csv, junit;
  if (!plan.jsonl.empty()) jsonl.emplace(plan.jsonl, false, "JSONL", inputs);
  if (!s.csv.empty()) csv.emplace(s.csv, false, "CSV", inputs);
  if (!plan.junit.empty()) junit.emplace(plan.junit, false, "JUnit XML", inputs);
  const std::optional<known_failures> known =
      plan.known_failures.empty() ? std::nullopt : std::optional(known_failures::load(plan.known_failures));
  out << fmt::format("opval bench: backend {}, policy {}, seed {}, {} cache, target CI +-{:g}%, budget {:g} s per case\n",
                     o.backend, o.pol.to_string(), o.seed, s.cache, s.target_ci_percent, s.budget);
  const environment env = bench_environment(backends, out);
  std::string no_peaks;
  const std::optional<machine_peaks> peaks = load_machine_peaks(s.machine_file, env, no_peaks);
  if (peaks) {
    bo.peaks = &*peaks;
    out << fmt::format("opval bench: the roofline of this machine from {} (measured {})\n", s.machine_file,
                       peaks->measured_at);
  } else {
    out << "opval bench: no roofline: " << no_peaks << '\n';
  }
  std::vector<std::unique_ptr<bench_reporter>> reporters;
  reporters.push_back(make_bench_console_reporter(out, backends.size() > 1, axes));
  if (jsonl) reporters.push_back(make_bench_jsonl_reporter(jsonl->stream(), env));
  if (csv) reporters.push_back(make_bench_csv_reporter(csv->stream()));
  if (junit) reporters.push_back(make_bench_junit_reporter(junit->stream()));
  // The history takes the records as the journal writes them (bench_records.hpp reads them back).
  std::optional<history_db> history;
  std::stringstream history_records;
  if (!plan.history.empty()) {
    history.emplace(plan.history, true);
    reporters.push_back(make_bench_jsonl_reporter(history_records, env));
  }
  bench_summary summary;
  const auto start = std::chrono::steady_clock::now();
  for (const bench_job& job : jobs) {
    case_result check = executor->run(job.lp, *job.sb, o);
    if (known)
      if (const std::string* cause = known->cause(check.backend, check.descriptor)) check.known_failure = *cause;
    bo.threads = job.threads;
    bench_result r = time_case(job.lp.prob, *job.sb->b, std::move(check), bo);
    r.sweep = job.point.values;
    summary.add(r);
    for (auto& rep : reporters) rep->on_result(r, job.point, job.template_index);
    for (std::optional<output_file>* f : {&jsonl, &csv})
      if (*f) (*f)->record_written();
  }
  for (auto& rep : reporters) rep->on_finish(summary);
  if (junit) junit->record_written();  // one document, written whole at the end
  for (const std::optional<output_file>* f : {&jsonl, &csv, &junit})
    if (*f) (*f)->check_reached();
  if (history) {
    const std::vector<bench_record> records = read_bench_records(history_records, "the benchmark's records");
    const run_identity identity = session_run_identity(
        plan.commit, plan.tier, plan.label, "opval bench",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    std::cerr << recorded_note(plan.history, history->record_bench(identity, records), records.size(), identity) << '\n';
  }
  return summary.ok() ? 0 : 1;
}

}  // namespace opval
