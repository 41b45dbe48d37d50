"""IREE as an opval backend (`iree`): each case is the single-op ONNX model the onnxruntime
adapter builds for it (opset 23; a few nodes where an epilogue or a composition needs them),
imported by IREE's ONNX importer, compiled by iree-compile for the CPU (llvm-cpu, the host's
features) and run by IREE's runtime (opval/iree_compiler.py): an MLIR compiler's codegen is
what is tested, on every op's suites.

A case computes in the contract's accumulation type (f32, f64, or f16 for f16:f16:f16; integer
contracts in f64, exact for their i32 sums), as in the onnxruntime adapter; the outputs are
rounded once to the output type by NumPy (adapters/rounding.py). f64 is compiled as f64:
IREE's default demotion of f64 to f32 is turned off (iree_compiler.BASE_FLAGS). Contracts
whose kernels round their inputs (tf32, f32@bf16) and rounding modes other than to nearest are
refused. IREE's CPU code runs with subnormals flushed (measured at creation, as for JAX):
denorm=ftz contracts are honoured, and denorm=ieee cases that meet a subnormal fail. A model IREE cannot import or compile (an op or type without a
lowering, f64 erf) is SKIPPED with the compiler's first error. IREE's ONNX importer has no
lowering for the opset-23 RMSNormalization and Attention operators: rms_norm and attention run
as their decompositions (ops_norm.py, ops_attention.py).

Compilation is most of a case's time (0.3-0.8 s per distinct model: op, attributes, shapes and
types); compiled modules are cached on disk (OPVAL_IREE_CACHE), so a suite run again costs
only its runs.
"""
from __future__ import annotations

import numpy as np

from ... import _opval
from ...iree_compiler import IreeCompileError, compile_onnx, version
from ..base import contract_refusal
from ..onnxruntime import OPS as ONNX_OPS
from ..onnxruntime.case import compute_type, operands, placeholders
from ..onnxruntime.graph import OPSET, Graph
from ..rounding import store
from .ops_attention import ATTENTION_OPS
from .ops_norm import NORM_OPS

__all__ = ["OPS", "iree_backend"]

OPS = {**ONNX_OPS, **NORM_OPS, **ATTENTION_OPS}


def _compiled(graph: Graph):
    return compile_onnx(graph.model())


def flushes_subnormals() -> bool:
    """Whether IREE's compiled CPU code flushes a subnormal f32 product to 0."""
    g = Graph("probe")
    product = g.op("Mul", g.input("x", np.array([2.0**-140], np.float32)), g.const([2.0], np.float32))
    g.output(product, (1,))
    return float(_compiled(g).run([g.feeds["x"]])[0][0]) == 0.0


class IreeAdapter:
    """supports() and execute() of the iree backend."""

    name = "iree"

    def __init__(self) -> None:
        self.version = f"iree {version()} (ONNX importer, llvm-cpu host, local-task)"
        self.flushes_subnormals = flushes_subnormals()

    def supports(self, p: _opval.Problem):
        op = OPS.get(p.op)
        if op is None:
            return ("unimplemented", f"the iree adapter has no mapping for {p.op}")
        why = contract_refusal(p, "IREE", flushes_subnormals=self.flushes_subnormals) or (op.refusal(p) if op.refusal else None)
        if why:
            return why
        compute = compute_type(p)
        graph = op.build(p, placeholders(p, compute), compute)
        try:
            _compiled(graph)  # cached: execute() finds it loaded
        except IreeCompileError as e:
            return f"IREE cannot compile {graph.op_types()} in {compute.name}: {e}"
        return None

    def execute(self, p: _opval.Problem, inputs: list, outputs: list) -> str:
        compute = compute_type(p)
        graph = OPS[p.op].build(p, operands(p, inputs, compute), compute)
        results = _compiled(graph).run([graph.feeds[i.name] for i in graph.inputs])
        for value, (name, _, shape) in zip(results, graph.outputs):
            if tuple(value.shape) != shape:
                raise RuntimeError(f"iree returned {name} of shape {list(value.shape)}, not {list(shape)}")
        rounded = store(p, results, outputs)
        return f"iree llvm-cpu, ONNX opset {OPSET} {graph.op_types()}, {compute.name} compute", rounded


def iree_backend() -> _opval.Backend:
    """IREE (llvm-cpu, local-task) as an opval Backend."""
    adapter = IreeAdapter()
    return _opval.callable_backend(adapter.name, adapter.version, adapter.supports, adapter.execute)
