// The library's diagnostics (opval/log.hpp), routed to a Python callable: python/opval/__init__.py
// hands it logging.getLogger("opval").log.
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <memory>
#include <string>

#include "bindings.hpp"
#include "opval/log.hpp"

namespace opval::python {

void bind_log(nb::module_& m) {
  m.def("set_log_sink", [](nb::object sink, int threshold) {
    if (sink.is_none()) {
      set_log_sink({}, log_level::warning);
      return;
    }
    // The sink may be called from a thread that runs cases without the GIL, and may outlive
    // the interpreter's last reference: it holds its own, dropped under the GIL.
    auto held = std::shared_ptr<nb::object>(new nb::object(std::move(sink)), [](nb::object* o) {
      if (!Py_IsInitialized()) return;  // at exit: the interpreter is gone, leak the reference
      nb::gil_scoped_acquire gil;
      delete o;
    });
    set_log_sink([held](log_level level, std::string_view message) {
      if (!Py_IsInitialized()) return;
      nb::gil_scoped_acquire gil;
      try {
        (*held)(static_cast<int>(level), std::string(message));
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("opval log sink");
      }
    }, static_cast<log_level>(threshold));
  }, nb::arg("sink").none(), nb::arg("threshold") = static_cast<int>(log_level::debug),
        "sink(level: int, message: str) receives the library's diagnostics at or above threshold "
        "(logging's levels); None restores the default (stderr, warnings only)");
  m.def("log", [](int level, std::string_view message) { log(static_cast<log_level>(level), message); },
        nb::arg("level"), nb::arg("message"), "sends a message through the library's sink (for tests)");
}

}  // namespace opval::python
