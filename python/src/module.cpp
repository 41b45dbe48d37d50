// opval._opval: the C++ core as a Python extension. python/opval/ builds the public API on it.
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"

#include "opval/build_info.hpp"
#include "opval/error.hpp"

NB_MODULE(_opval, m) {
  namespace nb = nanobind;
  // Instances still referenced at interpreter exit (results kept by test frameworks, backends
  // whose Python callables form cycles through C++) are freed by the process's end; nanobind's
  // report of them would be printed after the output of whatever ran (pytest's summary).
  nb::set_leak_warnings(false);
  m.doc() = "opval's C++ core: ops, problems, contracts, backends, the runner and its results";
  m.attr("__version__") = opval::build::version;
  m.def("git_sha", [] { return std::string(opval::build::git_sha); }, "the git commit opval was built from");
  // Bad input (unknown names, malformed descriptors) is a ValueError naming the problem.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const opval::error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  opval::python::bind_types(m);
  opval::python::bind_problems(m);
  opval::python::bind_tensors(m);
  opval::python::bind_backends(m);
  opval::python::bind_runner(m);
  opval::python::bind_log(m);
  opval::python::bind_session(m);
  opval::python::bind_graph(m);
}
