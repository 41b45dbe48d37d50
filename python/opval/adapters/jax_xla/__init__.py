"""JAX as an opval backend (`jax`): each op is one jax.jit function of JAX's own operators
(jax.numpy, jax.nn, jax.lax), compiled by XLA for the CPU.

A case runs in the contract's accumulation type (f32, f64, or f16 for f16:f16:f16; integer
contracts in f64, exact for their i32 sums) on the inputs converted to it exactly, and is
rounded once, in NumPy, to the output type. Contracts whose kernels round their inputs (tf32,
f32@bf16) and rounding modes other than to-nearest have no JAX counterpart on the CPU and are
SKIPPED.

Subnormals: XLA on the CPU runs with FTZ/DAZ set (by design, jax-ml/jax#16200): subnormal
f32/f64/bf16 inputs read as 0 and subnormal results become 0. denorm=ftz contracts are thus
honoured (checked at creation); under the default denorm=ieee, a case whose result depends on a
subnormal fails: a real JAX difference, kept.

64-bit: JAX computes "float64" in float32 unless jax_enable_x64 is set (it only warns). The
backend sets it once, process-wide, when created, and checks that an f64 computation gives
float64; if it does not, f64-computing cases (f64 and integer contracts) are SKIPPED with the
reason, and execute() rejects any result not in the compute type.

Compilation: one jax.jit per op, whose static arguments are the problem's computational
attributes (StaticProblem: layout-only ones left out), the choices made on the host (the
output type only where the computation reads it) and the compute type; the operands are its
arguments. JAX's cache thus compiles once per (op, attributes, operand shapes and types):
cases differing only in fill, strides, or in storage types that arrive converted to the same
compute type reuse the executable. Compilation is most of a run's time; a persistent cache
(JAX_COMPILATION_CACHE_DIR, with JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0) makes the runs
after the first several times faster.
`JaxAdapter.compile_stats` counts the executables built and the seconds spent on them.

The package is jax_xla, not jax (as the torch adapter's is pytorch): a folder named jax would
be the jax that `import jax` finds wherever opval/adapters is on sys.path (a script run from
that folder), as opval/selectors.py shadows the standard library's from opval/.
"""
from __future__ import annotations

import threading
from typing import Any

import jax
import jaxlib
import numpy as np
from jax import monitoring

from ... import _opval
from ...arrays import numpy_dtype, to_numpy
from ..base import FrameworkOp, compute_dtype, contract_refusal
from .ops_attention import ATTENTION_CHOICES, ATTENTION_OPS
from .ops_eltwise import ELTWISE_CHOICES, ELTWISE_OPS
from .ops_gemm import GEMM_CHOICES, GEMM_OPS
from .ops_norm import NORM_OPS
from ..rounding import output_type, store
from ..static import StaticProblem

__all__ = ["OPS", "JaxAdapter", "jax_backend", "StaticProblem"]

OPS: dict[str, FrameworkOp] = {**ELTWISE_OPS, **NORM_OPS, **GEMM_OPS, **ATTENTION_OPS}

# choices(problem, operands) -> dict, per op: what the adapter decides on the host before the
# jitted call (the output type where the computation depends on it, attention's path); part of
# the jit key (StaticProblem.choices).
CHOICES = {**ELTWISE_CHOICES, **GEMM_CHOICES, **ATTENTION_CHOICES}


def enable_x64() -> str | None:
    """Sets jax_enable_x64 and checks that it took: None, or why f64 cannot be computed."""
    try:
        jax.config.update("jax_enable_x64", True)
        got = jax.jit(lambda v: v * 2)(np.ones(1, np.float64)).dtype
    except Exception as e:  # an older or locked-down jax: refuse f64 rather than guess
        return f"jax_enable_x64 could not be set ({type(e).__name__}: {e})"
    if got != np.float64:
        return f"jax_enable_x64 did not take effect: a float64 computation gives {got}"
    return None


def flushes_subnormals() -> bool:
    """Whether XLA on the CPU runs with FTZ/DAZ (it does by design, jax-ml/jax#16200): a
    subnormal f32 times 2, computed in a jitted function, gives 0."""
    tiny = np.float32(2.0**-140)
    return float(jax.jit(lambda v, w: v * w)(tiny, np.float32(2.0))) == 0.0


class CompileStats:
    """Seconds JAX spends tracing, lowering and compiling (its own monitoring events), and
    how many executables XLA built (or loaded from a persistent compilation cache, when one is
    configured); process-wide, so the adapter reads differences."""

    _EVENTS = {
        "/jax/core/compile/jaxpr_trace_duration": "trace",
        "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
        "/jax/core/compile/backend_compile_duration": "compile",
    }
    _lock = threading.Lock()
    totals: dict[str, float] = {"trace": 0.0, "lower": 0.0, "compile": 0.0, "compilations": 0}
    _registered = False

    @classmethod
    def register(cls) -> None:
        with cls._lock:
            if not cls._registered:
                monitoring.register_event_duration_secs_listener(cls._listen)
                cls._registered = True

    @classmethod
    def _listen(cls, event: str, duration: float, **_: Any) -> None:
        which = cls._EVENTS.get(event)
        if which:
            cls.totals[which] += duration
            if which == "compile":
                cls.totals["compilations"] += 1

    @classmethod
    def snapshot(cls) -> dict[str, float]:
        return dict(cls.totals)


def _operand(t: _opval.Tensor, o: _opval.Operand, compute: np.dtype) -> np.ndarray:
    """An operand as the jitted function takes it: floats converted to the compute type
    (exact: every opval input type widens into it), integers and bools as they are (the op
    widens them in JAX)."""
    a = to_numpy(t)
    return a.astype(compute) if _opval.dtype_info(o.dtype).is_float else a


class JaxAdapter:
    """supports() and execute() of the jax backend."""

    name = "jax"

    def __init__(self, float64: bool = False) -> None:
        self.float64 = float64
        self.x64_refusal = enable_x64()
        self.flushes_subnormals = flushes_subnormals()
        self.version = f"jax {jax.__version__}, jaxlib {jaxlib.__version__} (jit, XLA CPU)"
        CompileStats.register()
        self._start = CompileStats.snapshot()
        self._jitted = {op: jax.jit(fop.run, static_argnums=(0, 2)) for op, fop in OPS.items()}

    @property
    def compile_stats(self) -> dict[str, float]:
        """Trace, lower and compile seconds and the executables built since creation."""
        now = CompileStats.snapshot()
        return {k: now[k] - self._start[k] for k in now}

    def supports(self, p: _opval.Problem):
        op = OPS.get(p.op)
        if op is None:
            return ("unimplemented", f"the jax adapter has no mapping for {p.op}")
        # XLA on the CPU flushes subnormals, which is what denorm=ftz allows (checked at creation).
        why = contract_refusal(p, "JAX", flushes_subnormals=self.flushes_subnormals, float64=self.float64)
        if why:
            return why
        if compute_dtype(p, self.float64) == _opval.dtype.f64 and self.x64_refusal:
            return f"{p.contract.types_string()} computes in f64: {self.x64_refusal}"
        return op.supports(p) if op.supports else None

    def execute(self, p: _opval.Problem, inputs: list, outputs: list) -> str:
        compute = numpy_dtype(compute_dtype(p, self.float64))
        operands = {o.name: _operand(t, o, compute) for o, t in zip(p.inputs(), inputs)}
        choose = CHOICES.get(p.op)
        static = StaticProblem.of(p, choose(p, operands) if choose else None)
        results = self._jitted[p.op](static, operands, compute)
        values = [np.asarray(result) for result in results]
        for value, target, operand in zip(values, outputs, p.outputs()):
            # An integer op (add, mul on i32/i64) computes in its operands' own type, wrapping as its contract does.
            own_integer = value.dtype.kind in "iu" and value.dtype == numpy_dtype(operand.dtype)
            if value.dtype not in (compute, numpy_dtype(output_type(p, operand, target))) and not own_integer:
                raise RuntimeError(f"jax computed {p.op} in {value.dtype}, not {compute}"
                                   + (" (was jax_enable_x64 turned off?)" if compute == np.float64 else ""))
        rounded = store(p, values, outputs)
        path = static.choice("path", None)
        return f"jax jit (XLA CPU), {compute.name} compute" + (f", {path}" if path else ""), rounded


def jax_backend(float64: bool = False) -> _opval.Backend:
    """JAX (jax.jit on the CPU) as an opval Backend; with float64, as a float64 reference
    (adapters.reference)."""
    adapter = JaxAdapter(float64)
    return _opval.callable_backend(adapter.name, adapter.version, adapter.supports, adapter.execute)
