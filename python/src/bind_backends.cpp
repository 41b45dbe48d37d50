// Backends: the registered ones, kernel plugins, and Python callables (opval.check and the
// framework adapters) behind the same interface, so that every check applies to them alike.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <string>

#include "backend_handle.hpp"
#include "bindings.hpp"
#include "backends/plugin/plugin_backend.hpp"
#include "opval/verdict.hpp"

namespace opval::python {

namespace {

/// "TypeError: what it said": one line for a verdict's reason (the Python layer keeps the
/// traceback). Call with the GIL held.
std::string one_line(const nb::python_error& e) {
  std::string text = nb::cast<std::string>(nb::str(e.type().attr("__name__"))) + ": " +
                     nb::cast<std::string>(nb::str(e.value()));
  if (const auto newline = text.find('\n'); newline != std::string::npos) text = text.substr(0, newline);
  return text;
}

/// opval.Unsupported, the Python face of opval::declined: a kernel raises it to decline a
/// problem at run time. Set when the module is made, which keeps it alive.
nb::handle unsupported_type;

/// The reason an opval.Unsupported carries (its str()), or one saying it carried none.
std::string decline_reason(const nb::python_error& e) {
  std::string reason = nb::cast<std::string>(nb::str(e.value()));
  return reason.empty() ? "the kernel raised opval.Unsupported without a reason" : reason;
}

/// A backend whose supports() and execute() are Python callables:
///   supports(problem) -> None | True (runs) | str (SKIPPED with that reason)
///                        | ("unimplemented", reason)
///   execute(problem, inputs: list[Tensor], outputs: list[Tensor]) -> None | str (implementation)
///                        | (implementation, rounded_to_output: bool), the latter from a float64
///                        reference whose results are rounded to the output types (a cast)
/// They run with the GIL held; a Python exception fails the case with its one-line message,
/// but opval.Unsupported, from either, makes it SKIPPED with its reason.
class callable_backend final : public backend {
 public:
  callable_backend(std::string name, std::string version, nb::object supports, nb::object execute)
      : name_(std::move(name)), version_(std::move(version)), supports_(std::move(supports)), execute_(std::move(execute)) {}
  ~callable_backend() override {
    nb::gil_scoped_acquire gil;
    supports_ = nb::object();
    execute_ = nb::object();
  }

  std::string name() const override { return name_; }
  std::string version() const override { return version_; }

  support supports(const problem& p) const override {
    nb::gil_scoped_acquire gil;
    try {
      return as_support(supports_(p));
    } catch (const nb::python_error& e) {
      if (e.matches(unsupported_type)) return support::skipped(decline_reason(e));
      throw std::runtime_error("the kernel's supports() raised " + one_line(e));
    }
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    nb::gil_scoped_acquire gil;
    nb::list inputs, outputs;
    for (const tensor& t : in) inputs.append(nb::cast(t));
    for (const tensor& t : out) outputs.append(nb::cast(t));
    try {
      nb::object answer = execute_(p, inputs, outputs);
      execution_info info{name_, ""};
      nb::handle implementation = answer;
      if (nb::isinstance<nb::tuple>(answer) && nb::len(answer) == 2) {
        implementation = answer[0];
        info.rounded_to_output = nb::cast<bool>(answer[1]);
      }
      if (!implementation.is_none()) info.implementation = nb::cast<std::string>(nb::str(implementation));
      return info;
    } catch (const nb::python_error& e) {
      if (e.matches(unsupported_type)) throw declined(decline_reason(e));
      throw std::runtime_error(one_line(e));
    }
  }

 private:
  static support as_support(nb::handle r) {
    if (r.is_none()) return support::yes();
    if (nb::isinstance<nb::bool_>(r))
      return nb::cast<bool>(r) ? support::yes() : support::skipped("declined by the kernel's supports()");
    if (nb::isinstance<nb::str>(r)) return support::skipped(nb::cast<std::string>(r));
    if (nb::isinstance<nb::tuple>(r) && nb::len(r) == 2) {
      const auto kind = nb::cast<std::string>(r[0]);
      const auto reason = nb::cast<std::string>(r[1]);
      if (kind == "unimplemented") return support::unimplemented(reason);
      if (kind == "skipped") return support::skipped(reason);
    }
    throw std::runtime_error("supports() must return None, a bool, a reason (str) or ('skipped'|'unimplemented', reason)");
  }

  std::string name_, version_;
  nb::object supports_, execute_;
};

void bind_support(nb::module_& m) {
  nb::class_<support>(m, "Support", "Whether a backend runs a problem, and if not, why")
      .def_ro("ok", &support::ok)
      .def_prop_ro("state", [](const support& s) { return s.ok ? std::string() : std::string(to_string(s.st)); })
      .def_ro("reason", &support::reason)
      .def("__bool__", [](const support& s) { return s.ok; });
}

}  // namespace

void bind_backends(nb::module_& m) {
  bind_support(m);
  // opval::declined thrown in C++ reaches Python as this type, and the callable backends turn
  // it back into opval::declined.
  unsupported_type = nb::exception<declined>(m, "Unsupported", PyExc_Exception);
  nb::setattr(unsupported_type, "__doc__",
              nb::str("Raised by a kernel (opval.check, opval.kernel_backend) that declines a problem it meets at run "
                      "time: the case is SKIPPED with str() of it as the reason, not FAILED."));
  nb::class_<backend_handle>(m, "Backend", "Something that executes problems")
      .def("__init__", [](backend_handle* h, std::string_view name) {
        new (h) backend_handle{make_backend(name), {std::string(name), ""}};
      }, nb::arg("name"), "A registered backend (see backend_names())")
      .def_prop_ro("name", [](const backend_handle& h) { return h.impl->name(); })
      .def_prop_ro("version", [](const backend_handle& h) { return h.impl->version(); })
      .def_prop_ro("isolatable", &backend_handle::isolatable,
                   "can run in a worker process (registered backends and plugins; not Python callables)")
      .def("supports", [](const backend_handle& h, const problem& p) { return h.impl->supports(p); }, nb::arg("problem"))
      .def("__repr__", [](const backend_handle& h) { return "Backend('" + h.impl->name() + "')"; });
  m.def("backend_names", &backend_names, "the registered backends");
  m.def("load_plugin", [](const std::string& path) {
    return backend_handle{load_plugin_backend(path), {"", path}};
  }, nb::arg("path"), "a kernel plugin (docs/PLUGINS.md) as a backend");
  m.def("callable_backend", [](std::string name, std::string version, nb::object supports, nb::object execute) {
    return backend_handle{std::make_shared<callable_backend>(std::move(name), std::move(version), std::move(supports),
                                                             std::move(execute)), {}};
  }, nb::arg("name"), nb::arg("version"), nb::arg("supports"), nb::arg("execute"),
        "a backend whose supports(problem) and execute(problem, inputs, outputs) are Python callables");
}

}  // namespace opval::python
