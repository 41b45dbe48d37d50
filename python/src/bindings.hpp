#pragma once
// The parts of the opval._opval module, one concept per file (python/src/bind_*.cpp).
#include <nanobind/nanobind.h>

namespace opval::python {

namespace nb = nanobind;

void bind_types(nb::module_& m);     ///< dtype, contract, policy
void bind_problems(nb::module_& m);  ///< ops, problems, suites, problem files
void bind_tensors(nb::module_& m);   ///< tensors and their zero-copy NumPy views
void bind_backends(nb::module_& m);  ///< registered backends, plugins, Python callables as backends
void bind_runner(nb::module_& m);    ///< run options, cases, results, workers, reporters
void bind_log(nb::module_& m);       ///< the library's diagnostics, routed to Python's logging
void bind_session(nb::module_& m);   ///< the session's options: keywords, defaults, RunOptions from keywords
void bind_graph(nb::module_& m);     ///< ONNX models as graphs, the fp64 graph reference

}  // namespace opval::python
