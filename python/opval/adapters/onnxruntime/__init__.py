"""ONNX Runtime as an opval backend (`onnxruntime`): each case is a single-node ONNX model (a
few nodes where the op's epilogue or a composition needs them), opset 23, built with the
`onnx` package and run by onnxruntime.InferenceSession on the CPUExecutionProvider.

A case computes in the contract's accumulation type (f32, f64, or f16 for f16:f16:f16;
integer contracts in f64, exact for their i32 sums): float operands are fed converted to it
exactly, integer and bool operands in their own types, all as contiguous NumPy arrays; the
outputs are rounded once to the output type by NumPy (round_to_output), except where the
ONNX Cast is the op under test (cast). Sessions are cached per model (graph.py).
Refused (SKIPPED, with the reason): contracts whose kernels round their inputs (tf32,
f32@bf16), rounding modes other than to nearest, flush-to-zero; f16 compute where the CPU
provider has no float16 kernel for a node (it would silently compute in float32); and any
model the CPU provider cannot run (e.g. Conv in float64, Gelu's Erf in float64).
Every op maps to a standard ONNX operator at opset 23 (Attention and RMSNormalization
included): no contrib-op or composed fallback is needed with onnxruntime >= 1.23.

Shared code of this package (not in adapters/base.py): case.py (compute type, operand feeds,
the OnnxOp table entry) and graph.py (graph builder, session
cache, IOBinding run, the CPU kernel registry check).
"""
from __future__ import annotations

import onnxruntime as ort

from ... import _opval
from ..base import FrameworkOp, contract_refusal
from ..rounding import store
from .case import compute_type, operands
from .graph import OPSET
from .ops_attention import ATTENTION_OPS
from .ops_eltwise import ELTWISE_OPS
from .ops_gemm import GEMM_OPS
from .ops_norm import NORM_OPS

__all__ = ["OPS", "onnxruntime_backend", "compute_type", "operands"]

OPS: dict[str, FrameworkOp] = {**ELTWISE_OPS, **NORM_OPS, **GEMM_OPS, **ATTENTION_OPS}


class OnnxRuntimeAdapter:
    """supports() and execute() of the onnxruntime backend."""

    name = "onnxruntime"

    def __init__(self, float64: bool = False):
        self.float64 = float64
        self.version = f"onnxruntime {ort.__version__} (CPUExecutionProvider, opset {OPSET})"

    def supports(self, p: _opval.Problem):
        op = OPS.get(p.op)
        if op is None:
            return ("unimplemented", f"the onnxruntime adapter has no mapping for {p.op}")
        why = contract_refusal(p, "onnxruntime", float64=self.float64)
        if why is None and op.supports:
            why = op.supports(p, compute_type(p, self.float64))
        return why

    def execute(self, p: _opval.Problem, inputs: list, outputs: list) -> str:
        compute = compute_type(p, self.float64)
        x = operands(p, inputs, compute)
        graph = OPS[p.op].build(p, x, compute)
        results = graph.run()
        rounded = store(p, results, outputs)
        return f"onnxruntime CPU, opset {OPSET} {graph.op_types()}, {compute.name} compute", rounded


def onnxruntime_backend(float64: bool = False) -> _opval.Backend:
    """ONNX Runtime (CPUExecutionProvider) as an opval Backend; with float64, as a float64
    reference (adapters.reference)."""
    adapter = OnnxRuntimeAdapter(float64)
    return _opval.callable_backend(adapter.name, adapter.version, adapter.supports, adapter.execute)
