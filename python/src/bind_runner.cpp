// Running cases (in this process or in a worker process), their results, and the reporters
// that turn results into the CLI's tables and JSON Lines records.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <sstream>

#include "backend_handle.hpp"
#include "bindings.hpp"
#include "opval/error.hpp"
#include "core/isolation.hpp"
#include "opval/judge.hpp"
#include "core/known_failures.hpp"
#include "opval/reporter.hpp"
#include "opval/runner.hpp"

namespace opval::python {

namespace {

void bind_options(nb::module_& m) {
  nb::enum_<guard_side>(m, "guard_side").value("after", guard_side::after).value("before", guard_side::before);
  nb::class_<run_options>(m, "RunOptions", "How cases run: policy, seed and the memory checks (docs/SAFETY.md)")
      .def(nb::init<>())
      .def_rw("backend", &run_options::backend, "the backends' names, for report headers")
      .def_rw("policy", &run_options::pol)
      .def_rw("seed", &run_options::seed)
      .def_rw("worst_k", &run_options::worst_k)
      .def_rw("perturb_check", &run_options::perturb_check)
      .def_rw("guard", &run_options::guard)
      .def_rw("guard_at", &run_options::guard_at)
      .def_rw("poison_check", &run_options::poison_check)
      .def_rw("input_check", &run_options::input_check)
      .def_rw("threads", &run_options::threads)
      .def_rw("leak_check", &run_options::leak_check)
      .def("set_reference", [](run_options& o, const backend_handle& b, bool float64) {
        o.reference = alternative_reference{b.impl, b.ref, float64};
      }, nb::arg("backend"), nb::arg("float64") = false,
           "judge against `backend` instead of opval's fp64 reference: with float64, it computes in float64 and "
           "is handed f64 outputs; else it runs each problem at its contract, and the bound doubles "
           "(docs/REFERENCES.md, 'Alternative references')")
      .def("clear_reference", [](run_options& o) { o.reference.reset(); }, "judge against opval's fp64 reference")
      .def_prop_ro("reference", [](const run_options& o) -> std::optional<std::string> {
        return o.reference ? std::optional<std::string>(o.reference->name()) : std::nullopt;
      }, "the alternative reference's name, or None for opval's own fp64 reference");
}

nb::dict timings_of(const case_timings& t) {
  nb::dict d;
  d["fill"] = t.fill, d["prepare"] = t.prepare, d["execute"] = t.execute, d["reference"] = t.reference;
  d["bound"] = t.bound, d["compare"] = t.compare, d["total"] = t.total;
  if (t.device_kernel >= 0) d["device_kernel"] = t.device_kernel;
  return d;
}

// The fields an output's verdict and its posterior tests share (both are judged comparisons).
template <class T>
nb::class_<T>& judged_fields(nb::class_<T>& c) {
  return c.def_ro("name", &T::name)
      .def_prop_ro("state", [](const T& v) { return std::string(to_string(v.st)); })
      .def_ro("reason", &T::reason)
      .def_ro("bound", &T::bound, "the formula or tolerance that applied")
      .def_prop_ro("max_ulps", [](const T& v) { return v.m.max_ulps; })
      .def_prop_ro("max_abs_error", [](const T& v) { return v.m.max_abs_error; })
      .def_prop_ro("max_error_over_bound", [](const T& v) { return v.m.max_error_over_bound; });
}

void bind_result(nb::module_& m) {
  nb::class_<output_check> check(m, "OutputCheck",
                                 "A posterior test of one output (softmax's row shape: each row divided by its own sum)");
  judged_fields(check);
  nb::class_<output_verdict> verdict(m, "OutputVerdict", "The judgement of one output");
  judged_fields(verdict).def_ro("checks", &output_verdict::checks,
                                "the posterior tests (OutputCheck), where the op has any; state is the worst of all");
  nb::class_<case_result>(m, "CaseResult", "Everything recorded about one case (record() has every field)")
      .def_ro("descriptor", &case_result::descriptor)
      .def_ro("op", &case_result::op)
      .def_ro("contract", &case_result::contract)
      .def_ro("seed", &case_result::seed)
      .def_ro("backend", &case_result::backend)
      .def_ro("backend_version", &case_result::backend_version)
      .def_prop_ro("implementation", [](const case_result& r) { return r.exec.implementation; })
      .def_prop_ro("state", [](const case_result& r) { return std::string(to_string(r.v.st)); },
                   "PASSED, FAILED, MISTRUSTED, SKIPPED, UNIMPLEMENTED, CRASH or TIMEOUT")
      .def_prop_ro("reason", [](const case_result& r) { return r.v.reason; })
      .def_prop_ro("policy", [](const case_result& r) { return r.v.policy; }, "the policy as given")
      .def_prop_ro("policy_note", [](const case_result& r) { return r.v.policy_note; },
                   "where the policy could not apply as given, what was used instead ('' when it applied)")
      .def_prop_ro("outputs", [](const case_result& r) { return r.v.outputs; })
      .def_prop_ro("failed", [](const case_result& r) { return is_failure(r.v.st); },
                   "FAILED, MISTRUSTED, CRASH or TIMEOUT")
      .def_ro("reference", &case_result::reference,
              "the alternative reference the case was judged against ('' for opval's own fp64 reference)")
      .def_ro("reference_note", &case_result::reference_note,
              "how far the alternative reference lies from opval's fp64 reference, per output")
      .def_prop_ro("timings", [](const case_result& r) { return timings_of(r.times); }, "seconds per stage")
      .def_rw("known_failure", &case_result::known_failure)
      .def_prop_ro(
          "choice",
          [](const case_result& r) -> nb::object {
            if (!r.choice) return nb::none();
            return nb::make_tuple(r.choice->rank, r.choice->why);
          },
          "in a run with a time budget: (rank, why) — its place in the chosen order and why it was chosen; else None")
      .def_prop_ro(
          "verification",
          [](const case_result& r) {
            nb::dict d;
            d["method"] = r.verified.method, d["sample"] = r.verified.sample;
            d["checksums"] = r.verified.checksums, d["why"] = r.verified.why;
            return d;
          },
          "how the outputs were verified: method ('full' or 'sampled'), sample, checksums, why (docs/NUMERICS.md)")
      .def_rw("repro", &case_result::repro, "the command (or Python call) that reproduces the case")
      .def_rw("source", &case_result::source)
      .def_ro("not_applicable", &case_result::not_applicable,
              "the checks that did not apply, and why (opval.judge: those that rerun the kernel)")
      .def("to_json", &to_json_line, "the JSON Lines record the CLI writes (docs/CLI.md)")
      .def("record", [](const case_result& r) { return nb::module_::import_("json").attr("loads")(to_json_line(r)); },
           "the JSON record as a dict: every field, metrics and worst elements included")
      .def_static("from_json", &from_json_line, nb::arg("line"))
      .def("__repr__", [](const case_result& r) {
        return "CaseResult(" + std::string(to_string(r.v.st)) + ", '" + r.descriptor + "', " + r.backend + ")";
      });
  nb::class_<run_summary>(m, "RunSummary", "Totals of a run")
      .def(nb::init<>())
      .def("add", nb::overload_cast<const case_result&>(&run_summary::add), nb::arg("result"))
      .def_ro("passed", &run_summary::passed)
      .def_ro("failed", &run_summary::failed)
      .def_ro("mistrusted", &run_summary::mistrusted)
      .def_ro("skipped", &run_summary::skipped)
      .def_ro("unimplemented", &run_summary::unimplemented)
      .def_ro("crashed", &run_summary::crashed)
      .def_ro("timed_out", &run_summary::timed_out)
      .def_ro("known_failed", &run_summary::known_failed)
      .def_rw("seconds", &run_summary::seconds)
      .def_prop_ro("total", &run_summary::total)
      .def_prop_ro("failures", &run_summary::failures, "FAILED + MISTRUSTED + CRASH + TIMEOUT");
}

/// A C++ reporter writing into a buffer; each call returns the text it wrote, for Python to
/// print wherever its output goes. The buffer lives on the heap: the reporter keeps a
/// reference to it while this object moves.
class text_reporter {
 public:
  template <class Make>
  explicit text_reporter(Make make) : out_(std::make_unique<std::ostringstream>()), impl_(make(*out_)) {}
  std::string start(const run_options& o) { impl_->on_start(o); return drain(); }
  std::string result(const case_result& r) { impl_->on_result(r); return drain(); }
  std::string finish(const run_summary& s) { impl_->on_finish(s); return drain(); }

 private:
  std::string drain() {
    std::string text = out_->str();
    out_->str({});
    return text;
  }
  std::unique_ptr<std::ostringstream> out_;
  std::unique_ptr<reporter> impl_;
};

void bind_reporters(nb::module_& m) {
  nb::class_<text_reporter>(m, "Reporter", "The CLI's reporters; each call returns the text written")
      .def_static("console", [](bool verbose, bool show_backend, bool quiet, int width) {
        return text_reporter([&](std::ostream& o) {
          return make_console_reporter(o, {.verbose = verbose, .show_backend = show_backend, .quiet = quiet, .width = width});
        });
      }, nb::arg("verbose") = false, nb::arg("show_backend") = false, nb::arg("quiet") = false, nb::arg("width") = 120)
      .def_static("side_by_side", [] { return text_reporter([](std::ostream& o) { return make_side_by_side_reporter(o); }); })
      .def_static("tightness", [] { return text_reporter([](std::ostream& o) { return make_tightness_reporter(o); }); })
      .def_static("jsonl", [] { return text_reporter([](std::ostream& o) { return make_jsonl_reporter(o); }); })
      .def("start", &text_reporter::start, nb::arg("options"))
      .def("result", &text_reporter::result, nb::arg("result"))
      .def("finish", &text_reporter::finish, nb::arg("summary"));
}

void bind_running(nb::module_& m) {
  m.def("run_case", [](const problem& p, const backend_handle& b, const run_options& o, const std::string& source) {
    return run_case_caught({p, source}, *b.impl, o, b.ref);
  }, nb::arg("problem"), nb::arg("backend"), nb::arg("options"), nb::arg("source") = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "runs one case in this process; an exception is a FAILED case carrying its message");
  // opval.judge's arrays: (name, element type as stored, shape, bytes), bound to the operands
  // by the same function as the CLI's files (opval/judge.hpp).
  using array_tuple = std::tuple<std::string, std::string, dims, nb::bytes>;
  m.def("judge_arrays", [](const problem& p, const std::vector<array_tuple>& inputs,
                           const std::vector<array_tuple>& outputs, const run_options& o, const std::string& source) {
    auto arrays = [](const std::vector<array_tuple>& given) {
      std::vector<array_data> out;
      for (const auto& [name, type, shape, bytes] : given) {
        const auto* data = static_cast<const std::byte*>(bytes.data());
        out.push_back({name, type, shape, std::vector<std::byte>(data, data + bytes.size())});
      }
      return out;
    };
    const std::vector<tensor> ins = bind_arrays(p.spec().inputs(p), arrays(inputs), "input");
    const std::vector<tensor> outs = bind_arrays(p.spec().outputs(p), arrays(outputs), "output");
    nb::gil_scoped_release unlocked;
    return judge(p, ins, outs, o, source);
  }, nb::arg("problem"), nb::arg("inputs"), nb::arg("outputs"), nb::arg("options"), nb::arg("source") = "",
        "the verdict on arrays the caller has (opval/judge.hpp); a mismatch with the problem's operands raises");
  m.def("read_array_file", [](const std::string& path) {
    std::vector<array_tuple> out;
    for (const array_data& a : read_array_file(path))
      out.emplace_back(a.name, a.type, a.shape, nb::bytes(a.bytes.data(), a.bytes.size()));
    return out;
  }, nb::arg("path"), "the arrays of an .npy, .npz or ONNX TensorProto .pb file as (name, type, shape, bytes)");
  m.def("unfinished_case", [](const problem& p, const std::string& source, const backend_handle& b, const run_options& o,
                              std::string_view st, std::string reason) {
    const std::optional<state> parsed = parse_state(st);
    if (!parsed) throw error("unknown state '" + std::string(st) + "'");
    return unfinished_case({p, source}, *b.impl, o, *parsed, std::move(reason), b.ref);
  }, nb::arg("problem"), nb::arg("source"), nb::arg("backend"), nb::arg("options"), nb::arg("state"), nb::arg("reason"),
        "the record of a case that produced no result of its own (CRASH, TIMEOUT), with its repro");
  m.def("render_repro", [](const case_result& r, std::string_view style, const std::string& backend,
                           const std::string& reference, const std::string& keywords, const run_options* options) {
    case_identity id = r;
    if (options) {  // the options it ran with, for a result read back from a record
      id.options = *options;
      id.options.reference.reset();
    }
    const repro_names names{.backend = backend, .reference = reference, .keywords = keywords};
    if (style == "cli") return render_repro(id, repro_style::cli, names);
    if (style == "python_run") return render_repro(id, repro_style::python_run, names);
    if (style == "python_check") return render_repro(id, repro_style::python_check, names);
    throw error("unknown repro style '" + std::string(style) + "' (known: cli python_run python_check)");
  }, nb::arg("result"), nb::arg("style") = "cli", nb::arg("backend") = "", nb::arg("reference") = "",
        nb::arg("keywords") = "", nb::arg("options").none() = nb::none(),
        "the repro of a case from its identity: `opval repro ...` (cli), `python -m opval run ...` (python_run) or "
        "`opval.check(...)` (python_check), naming the backend, the reference and more keywords as given");
  nb::class_<case_worker>(m, "Worker", "Runs cases in a worker process: a crash or hang is a verdict")
      .def("__init__", [](case_worker* w, const std::string& executable, double timeout) {
        new (w) case_worker(isolation_options{.worker_executable = executable, .timeout_seconds = timeout});
      }, nb::arg("executable"), nb::arg("timeout") = isolation_options{}.timeout_seconds)
      .def("run", [](case_worker& w, const problem& p, const backend_handle& b, const run_options& o,
                     const std::string& source) {
        if (!b.isolatable()) throw error("backend " + b.impl->name() + " runs only in this process (isolation='none')");
        return w.run({p, source}, b.ref, *b.impl, o);
      }, nb::arg("problem"), nb::arg("backend"), nb::arg("options"), nb::arg("source") = "",
           nb::call_guard<nb::gil_scoped_release>())
      .def("make", [](case_worker& w, const std::string& name, const std::string& plugin) {
        const backend_ref ref{name, plugin};
        return backend_handle{remote_backend(w.describe(ref)), ref};
      }, nb::arg("name") = "", nb::arg("plugin") = "", nb::call_guard<nb::gil_scoped_release>(),
           "the backend `name` or the plugin at `plugin`, made in the worker (its code never runs in this "
           "process): a Backend that runs there only; a crash, exit or hang while making it raises ValueError")
      .def_prop_ro("pid", &case_worker::pid);
}

void bind_known_failures(nb::module_& m) {
  nb::class_<known_failures>(m, "KnownFailures", "Cases known to fail on a backend (tests/known_failures.txt's format)")
      .def_static("load", &known_failures::load, nb::arg("path"))
      .def("cause", [](const known_failures& k, std::string_view backend, std::string_view descriptor) {
        const std::string* cause = k.cause(backend, descriptor);
        return cause ? std::optional<std::string>(*cause) : std::nullopt;
      }, nb::arg("backend"), nb::arg("descriptor"), "the recorded cause, or None when the case is not listed")
      .def("of_backend", &known_failures::of_backend, nb::arg("backend"), "descriptor -> cause, for one backend")
      .def("__len__", &known_failures::size);
}

}  // namespace

void bind_runner(nb::module_& m) {
  bind_known_failures(m);
  bind_options(m);
  bind_result(m);
  bind_reporters(m);
  bind_running(m);
}

}  // namespace opval::python
