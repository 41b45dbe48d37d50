"""TensorFlow as an opval backend, three ways (docs/PYTHON.md, "Framework adapters"):

- `tensorflow`: eager, each operation dispatched to its kernel as it is called;
- `tensorflow_function`: the op traced into a tf.function, whose graph Grappler optimizes
  (constant folding, arithmetic simplification, remapping into fused kernels) before it runs;
- `tensorflow_xla`: tf.function(jit_compile=True), the graph compiled by XLA for the CPU.

A case runs in the contract's accumulation type (f32, f64, or f16 for f16:f16:f16; integer
contracts in f64, exact for their i32 sums) on the inputs converted to it exactly, and is
rounded once, in NumPy, to the output type (adapters/rounding.py). Contracts whose kernels
round their inputs (tf32, f32@bf16) and rounding modes other than to-nearest are SKIPPED. In
float64 the eager mapping is the TensorFlow reference (`--reference tensorflow`).

Process-wide settings the backend makes when created, since they change numerics:
TensorFloat-32 is turned off (TensorFlow enables it by default; GPUs only, but an f32 contract
must never run at TF32). TensorFlow's CPU kernels run with FTZ/DAZ set (its thread pools and
XLA's alike, checked at creation): subnormal inputs read as 0 and subnormal results become 0.
denorm=ftz contracts are thus honoured; under the default denorm=ieee a case whose result
depends on a subnormal fails: a real TensorFlow difference, kept (tests/known_failures.txt).

Compilation: one tf.function per (op, computational attributes, host choices, compute type)
(StaticProblem, as the JAX adapter's jit key), kept in a bounded cache; TensorFlow traces it
again for each new operand shape and type. `TfAdapter.compile_stats` counts the traces.

The package is tensorflow_cpu, not tensorflow: a folder named tensorflow would be the one
`import tensorflow` finds wherever opval/adapters is on sys.path.
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections import OrderedDict
from typing import Callable

import numpy as np

# What TensorFlow's C++ side writes to stderr on every import, whatever TF_CPP_MIN_LOG_LEVEL
# says (it is written before absl's logging starts): left out of a run's output.
_START_UP_NOTICES = ("All log messages before absl::InitializeLog()", "oneDNN custom operations are on")
#: Whether XLA auto-clustering can cluster for the CPU in this process (import_tensorflow).
CPU_AUTO_CLUSTERING = False


def _load_triton_first() -> None:
    """Triton (which torch.compile's Inductor imports) aborts the process when it is loaded after
    TensorFlow — both carry LLVM, and the second registers LLVM's command-line options again
    ("Option 'bitcode-mdindex-threshold' registered more than once") — while loaded before it,
    both work. So where it is installed, it is loaded first."""
    import importlib.util

    if "triton" not in sys.modules and importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401


def import_tensorflow():
    """tensorflow, imported with its start-up notices left out of stderr and everything else it
    writes there passed on (an error of a broken install stays visible)."""
    global CPU_AUTO_CLUSTERING
    if "tensorflow" in sys.modules:  # imported before opval: its flags are what they were then
        CPU_AUTO_CLUSTERING = "--tf_xla_cpu_global_jit" in os.environ.get("TF_XLA_FLAGS", "")
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # the C++ side's later info and warnings
    _load_triton_first()
    # XLA auto-clustering (tf.config.optimizer.set_jit) clusters for the CPU only with this flag,
    # read once when TensorFlow starts; it does nothing while auto-clustering is off (the default).
    if "--tf_xla_cpu_global_jit" not in os.environ.get("TF_XLA_FLAGS", ""):
        os.environ["TF_XLA_FLAGS"] = (os.environ.get("TF_XLA_FLAGS", "") + " --tf_xla_cpu_global_jit").strip()
    CPU_AUTO_CLUSTERING = True
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            import tensorflow
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            for line in caught.read().decode(errors="replace").splitlines(keepends=True):
                if not any(notice in line for notice in _START_UP_NOTICES):
                    sys.stderr.write(line)
    return tensorflow


tf = import_tensorflow()
tf.get_logger().setLevel("ERROR")  # not the retracing warning: tracing per shape is the design

from ... import _opval  # noqa: E402
from ...arrays import numpy_dtype, to_numpy  # noqa: E402
from ..base import FrameworkOp, compute_dtype, contract_refusal  # noqa: E402
from ..rounding import store  # noqa: E402
from ..static import StaticProblem  # noqa: E402
from .ops_attention import ATTENTION_OPS  # noqa: E402
from .ops_eltwise import ELTWISE_CHOICES, ELTWISE_OPS  # noqa: E402
from .ops_gemm import GEMM_CHOICES, GEMM_OPS  # noqa: E402
from .ops_norm import NORM_OPS  # noqa: E402
from .ops_pool import POOL_OPS  # noqa: E402

__all__ = ["OPS", "MODES", "TfAdapter", "tensorflow_backend"]

OPS: dict[str, FrameworkOp] = {**ELTWISE_OPS, **NORM_OPS, **GEMM_OPS, **ATTENTION_OPS, **POOL_OPS}
CHOICES = {**ELTWISE_CHOICES, **GEMM_CHOICES}

#: Backend name -> mode.
MODES = {"tensorflow": "eager", "tensorflow_function": "function", "tensorflow_xla": "xla"}
_DESCRIPTIONS = {"eager": "eager", "function": "tf.function, Grappler", "xla": "tf.function(jit_compile=True), XLA"}

# Traced functions kept: a regression suite has a few hundred distinct keys; past this, the
# least recently used are dropped (TensorFlow frees their graphs).
_CACHE_SIZE = 512


def _settings() -> None:
    tf.config.experimental.enable_tensor_float_32_execution(False)


def _compiled(fn: Callable, mode: str) -> Callable:
    """fn as the mode runs it: itself (eager) or a tf.function (autograph off: the op bodies are
    plain TensorFlow calls, and autograph's source parsing of lambdas only warns)."""
    if mode == "eager":
        return fn
    return tf.function(fn, jit_compile=(mode == "xla"), autograph=False)


def _onednn_note() -> str:
    """TensorFlow's oneDNN kernels (TF_ENABLE_ONEDNN_OPTS, on by default on x86) replace its
    Eigen ones for matmul, convolution and others: another summation order, named in the
    backend's version."""
    try:
        from tensorflow.python.util import _pywrap_util_port

        return ", oneDNN kernels" if _pywrap_util_port.IsMklEnabled() else ", Eigen kernels"
    except (ImportError, AttributeError):  # a private module: a TensorFlow without it says nothing
        return ""


def flushes_subnormals(mode: str) -> bool:
    """Whether TensorFlow in `mode` flushes a subnormal f32 product to 0 (its CPU kernels and
    XLA's run with FTZ/DAZ)."""
    multiply = _compiled(lambda v, w: v * w, mode)
    return float(multiply(tf.constant(np.float32(2.0**-140)), tf.constant(np.float32(2.0)))) == 0.0


def _operand(t: _opval.Tensor, o: _opval.Operand, compute: np.dtype) -> np.ndarray:
    """Floats converted to the compute type (exact: every opval input type widens into it),
    integers and bools as they are (the op widens them)."""
    a = to_numpy(t)
    return a.astype(compute) if _opval.dtype_info(o.dtype).is_float else a


class TfAdapter:
    """supports() and execute() of the three TensorFlow backends."""

    def __init__(self, name: str = "tensorflow", float64: bool = False) -> None:
        if name not in MODES:
            raise ValueError(f"unknown TensorFlow backend '{name}' (known: {', '.join(MODES)})")
        _settings()
        self.name, self.mode, self.float64 = name, MODES[name], float64
        self.flushes_subnormals = flushes_subnormals(self.mode)
        self.version = f"tensorflow {tf.__version__} ({_DESCRIPTIONS[self.mode]}, CPU{_onednn_note()})"
        self._functions: OrderedDict[tuple, Callable] = OrderedDict()

    @property
    def compile_stats(self) -> dict[str, int]:
        """The tf.functions made and the traces (graphs built) of those still cached."""
        traces = sum(f.experimental_get_tracing_count() for f in self._functions.values()
                     if hasattr(f, "experimental_get_tracing_count"))
        return {"functions": len(self._functions), "traces": traces}

    def supports(self, p: _opval.Problem):
        op = OPS.get(p.op)
        if op is None:
            return ("unimplemented", f"the tensorflow adapter has no mapping for {p.op}")
        why = contract_refusal(p, "TensorFlow", flushes_subnormals=self.flushes_subnormals, float64=self.float64)
        return why or (op.supports(p) if op.supports else None)

    def _function(self, static: StaticProblem, compute: np.dtype) -> Callable:
        key = (static, compute.name)
        fn = self._functions.get(key)
        if fn is None:
            run = OPS[static.op].run
            fn = _compiled(lambda x: run(static, x, compute), self.mode)
            self._functions[key] = fn
            if len(self._functions) > _CACHE_SIZE:
                self._functions.popitem(last=False)
        self._functions.move_to_end(key)
        return fn

    def execute(self, p: _opval.Problem, inputs: list, outputs: list) -> str:
        compute = numpy_dtype(compute_dtype(p, self.float64))
        operands = {o.name: _operand(t, o, compute) for o, t in zip(p.inputs(), inputs)}
        choose = CHOICES.get(p.op)
        static = StaticProblem.of(p, choose(p, operands) if choose else None)
        if self.mode == "eager":
            results = OPS[p.op].run(static, {k: tf.constant(v) for k, v in operands.items()}, compute)
        else:
            results = self._function(static, compute)(operands)
        values = [np.asarray(r) for r in results]
        for value, operand, target in zip(values, p.outputs(), outputs):
            own_integer = value.dtype.kind in "iu" and value.dtype == numpy_dtype(operand.dtype)
            if value.dtype != compute and not own_integer:
                raise RuntimeError(f"tensorflow computed {p.op} in {value.dtype}, not {compute}")
            if value.shape != tuple(target.shape):  # TensorFlow's own error (Conv2D on an empty batch)
                raise RuntimeError(f"tensorflow returned output '{operand.name}' of shape {list(value.shape)}, "
                                   f"not {list(target.shape)}")
        return f"tensorflow {_DESCRIPTIONS[self.mode]}, {compute.name} compute", store(p, values, outputs)


def tensorflow_backend(name: str = "tensorflow", float64: bool = False) -> _opval.Backend:
    """TensorFlow (`name`: a MODES key) as an opval Backend; with float64, the eager one as a
    float64 reference (adapters.reference)."""
    adapter = TfAdapter(name, float64)
    return _opval.callable_backend(adapter.name, adapter.version, adapter.supports, adapter.execute)
