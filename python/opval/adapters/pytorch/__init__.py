"""PyTorch as an opval backend: eager (`torch`) and torch.compile with Inductor on the CPU
(`torch_compile`).

A case runs the op with torch's operators in the contract's accumulation type (f32, f64, or
f16 for f16:f16:f16; integer contracts in f64, exact for their i32 sums) on the inputs
converted to it exactly, and rounds once to the output type: torch's kernels are what is
tested, at the precision the contract names. Contracts whose kernels round their inputs
(tf32, f32@bf16) and rounding modes other than to-nearest have no torch counterpart on the
CPU and are SKIPPED, as is anything an op's table does not map.
"""
from __future__ import annotations

import torch

from ... import _opval
from ...arrays import from_any as torch_to_numpy
from ...arrays import to_torch
from ..base import FrameworkOp, compute_dtype, contract_refusal
from .ops_attention import ATTENTION_OPS
from .ops_eltwise import ELTWISE_OPS
from .ops_gemm import GEMM_OPS
from ..rounding import store
from .ops_norm import NORM_OPS
from .ops_pool import POOL_OPS
from .types import torch_type

OPS: dict[str, FrameworkOp] = {**ELTWISE_OPS, **NORM_OPS, **GEMM_OPS, **ATTENTION_OPS, **POOL_OPS}


def compute_type(p: _opval.Problem, float64: bool = False) -> torch.dtype | str:
    """The torch type a case computes in, or the reason torch cannot honour the contract
    (float64: as a float64 reference, see adapters.reference)."""
    return contract_refusal(p, "torch", float64=float64) or torch_type(compute_dtype(p, float64))


def to_compute(t: torch.Tensor, compute: torch.dtype) -> torch.Tensor:
    """A float operand in the compute type (exactly: every opval input type widens into it,
    f16:f16:f16 apart, whose inputs are f16 already); integer and bool operands unchanged."""
    return t.to(compute) if t.is_floating_point() else t


class TorchAdapter:
    """supports() and execute() of the torch backends."""

    def __init__(self, compile: bool = False, float64: bool = False):
        self.compile, self.float64 = compile, float64
        self.name = "torch_compile" if compile else "torch"
        self.version = f"torch {torch.__version__}" + (" (torch.compile, inductor, CPU)" if compile else " (eager, CPU)")
        if compile:
            from .compiled import CompiledCases

            self._compiled = CompiledCases()

    def supports(self, p: _opval.Problem):
        op = OPS.get(p.op)
        if op is None:
            return ("unimplemented", f"the torch adapter has no mapping for {p.op}")
        compute = compute_type(p, self.float64)
        if isinstance(compute, str):
            return compute
        why = op.supports(p) if op.supports else None
        if why is None and self.compile:
            why = self._compiled.prepare(p, op.run, self._operands(p, p.make_inputs(1), compute), compute)
        return why

    @staticmethod
    def _operands(p: _opval.Problem, inputs: list, compute: torch.dtype) -> dict[str, torch.Tensor]:
        return {o.name: to_compute(to_torch(t), compute) for o, t in zip(p.inputs(), inputs)}

    def execute(self, p: _opval.Problem, inputs: list, outputs: list) -> str:
        compute = compute_type(p, self.float64)
        operands = self._operands(p, inputs, compute)
        if self.compile:
            results = self._compiled.run(p, operands)
        else:
            with torch.no_grad():
                results = OPS[p.op].run(p, operands, compute)
        implementation = f"torch {'compile (inductor)' if self.compile else 'eager'}, {str(compute).removeprefix('torch.')} compute"
        return implementation, store(p, [torch_to_numpy(r) for r in results], outputs)


def torch_backend(compile: bool = False, float64: bool = False) -> _opval.Backend:
    """PyTorch (eager, or torch.compile with Inductor) as an opval Backend; with float64, as
    a float64 reference (adapters.reference)."""
    adapter = TorchAdapter(compile, float64)
    return _opval.callable_backend(adapter.name, adapter.version, adapter.supports, adapter.execute)
