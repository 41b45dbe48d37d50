"""What every ONNX Runtime op shares: the compute type as NumPy sees it, the operands fed to
the graph, the op table entry (build the graph, check ORT can run it, run it) and the one
final rounding to the output type is adapters/rounding.py's, shared by every adapter.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ... import _opval
from ...arrays import numpy_dtype, to_numpy
from ..base import FrameworkOp, compute_dtype
from .graph import Graph

Build = Callable[[_opval.Problem, dict, np.dtype], Graph]


def compute_type(p: _opval.Problem, float64: bool = False) -> np.dtype:
    """The NumPy type a case computes in (float64, float32, or float16 for f16:f16:f16;
    float64 always for a float64 reference)."""
    return numpy_dtype(compute_dtype(p, float64))


def is_float(dtype: np.dtype) -> bool:
    return np.dtype(dtype) not in _NOT_FLOAT


_NOT_FLOAT = {np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64, np.bool_)}


def to_feed(array: np.ndarray, compute: np.dtype) -> np.ndarray:
    """An operand as the graph is fed it: float operands converted to the compute type
    (exactly: every opval input type widens into it), integer and bool operands in their own
    type; always C-contiguous (strided views, padded rows and transposes become plain) and of
    the operand's rank (np.ascontiguousarray would make a 0-d operand 1-d)."""
    if is_float(array.dtype):
        array = array.astype(compute, copy=False)
    return array if array.flags.c_contiguous else array.copy(order="C")


def operands(p: _opval.Problem, inputs: list, compute: np.dtype) -> dict[str, np.ndarray]:
    return {o.name: to_feed(to_numpy(t), compute) for o, t in zip(p.inputs(), inputs)}


def placeholders(p: _opval.Problem, compute: np.dtype) -> dict[str, np.ndarray]:
    """Uninitialized operands of the right shapes and feed types: enough to build the graph."""
    out = {}
    for o in p.inputs():
        t = numpy_dtype(o.dtype)
        out[o.name] = np.empty(o.shape, dtype=compute if is_float(t) else t)
    return out


@dataclass(frozen=True)
class OnnxOp(FrameworkOp):
    """A FrameworkOp whose run builds an ONNX graph (build) and runs it in ORT. refusal: why the
    op's mapping cannot express a problem, whatever runs the graph (the IREE backend runs these
    graphs too, and asks this, not ORT's kernel checks)."""

    build: Build | None = None
    refusal: Callable[[_opval.Problem], str | None] | None = None


def onnx_op(build: Build, refusal: Callable[[_opval.Problem], str | None] | None = None) -> OnnxOp:
    def run(p, x, compute):
        return build(p, x, compute).run()

    def supports(p, compute: np.dtype | None = None):
        return (refusal(p) if refusal else None) or prepare(build, p, compute)

    return OnnxOp(run=run, supports=supports, build=build, refusal=refusal)


def prepare(build: Build, p: _opval.Problem, compute: np.dtype | None = None) -> str | None:
    """Builds the case's graph, computing in `compute` (default: compute_type(p)), and its
    session (cached for execute); the reason ORT's CPU provider cannot run it, or None."""
    compute = compute_type(p) if compute is None else compute
    graph = build(p, placeholders(p, compute), compute)
    if compute == np.float16:
        missing = graph.missing_float16_kernel()
        if missing:
            return (f"onnxruntime's CPUExecutionProvider has no float16 kernel for {missing} (f16 compute): "
                    "it would insert Casts and compute in float32")
    try:
        graph.session()
    except Exception as e:
        # An operator or type the CPU provider does not implement is refused; any other
        # failure to load a valid model is ORT's, and is left to execute() to report.
        if "NOT_IMPLEMENTED" in str(e):
            return f"onnxruntime cannot run {graph.op_types()} in {compute.name}: {_first_line(e)}"
    return None


def _first_line(e: Exception) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : ", "", text)
    return text.replace(" node with name ''", "")
