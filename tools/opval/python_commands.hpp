#pragma once
// The commands of `opval` that run through opval's Python layer, because the stacks they drive
// are Python libraries (ONNX Runtime's, PyTorch's, JAX's): `opval graph run|triage|precision` become
// `python -m opval graph run|triage|precision` with the same arguments (docs/GRAPH.md).

namespace opval::cli {

/// Whether argv is a command the Python layer runs.
bool runs_in_python(int argc, char** argv);

/// Replaces this process with the Python layer's command; returns only on failure, with the
/// exit code of bad input after one error line naming what is missing.
int run_in_python(int argc, char** argv);

}  // namespace opval::cli
