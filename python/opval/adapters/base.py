"""What every framework adapter shares: the per-op table, and the opval backend around it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import _opval


@dataclass(frozen=True)
class FrameworkOp:
    """One op in a framework.

    run(problem, inputs, compute) -> outputs: `inputs` maps operand names to framework arrays
    already converted to the compute type (integer operands keep theirs); the outputs come in
    p.outputs() order, in the compute type or already in the output's type.
    supports(problem) -> None, or the reason the framework cannot express this problem.
    """

    run: Callable[..., list]
    supports: Callable[[_opval.Problem], str | None] | None = None


def attribute_refusal(p: _opval.Problem, unsupported: dict[str, Any]) -> str | None:
    """The reason, when p sets an attribute away from the only value the adapter handles."""
    for name, allowed in unsupported.items():
        if p.get(name) != allowed:
            return f"{name}={p.get(name)} is not mapped to the framework's operators"
    return None


# Attention features the framework adapters do not map (softcap, sliding windows, a bias with
# batch or head dims): refused rather than computed without them.
ATTENTION_UNMAPPED = {"softcap": 0.0, "window_left": -1, "window_right": -1, "mask_shape": "lq_lk"}


def integer_wrap_refusal(p: _opval.Problem) -> str | None:
    """add/mul on an integer contract wrap modulo 2^bits; the adapters compute integer contracts
    in float64 (compute_dtype), which neither wraps nor keeps i64's low bits: refused."""
    if not _opval.dtype_info(p.contract.dst).is_float:
        return (f"{p.op} {p.contract.types_string()}: integer results wrap modulo 2^bits; the adapter computes "
                "integer contracts in float64")
    return None


# opval's narrow formats, which the adapters do not map (their tensors would be read as raw
# bytes): refused, never computed wrongly.
_NARROW_TYPES = frozenset({"f8_e4m3fnuz", "f8_e5m2fnuz", "f8_e8m0", "f4_e2m1", "f6_e2m3", "f6_e3m2", "i4", "u4"})


def format_refusal(p: _opval.Problem, framework: str) -> str | None:
    """Why a framework adapter cannot run p's operand formats: a narrow format, or the block
    scales of a block-scaled cast or matmul (MX, NVFP4); None when it can."""
    for o in [*p.inputs(), *p.outputs()]:
        name = _opval.dtype_name(o.dtype)
        if name in _NARROW_TYPES:
            return f"the {framework} adapter has no mapping for {name} (operand {o.name})"
        if o.name in ("x_scale", "y_scale", "A_scale", "B_scale"):
            return f"the {framework} adapter has no mapping for block-scaled casts and matmuls (MX, NVFP4)"
    return None


def contract_refusal(p: _opval.Problem, framework: str, flushes_subnormals: bool = False,
                     float64: bool = False) -> str | None:
    """Why a framework that computes with its own operators and rounds to nearest cannot
    honour p's contract; None when it can. A framework that keeps subnormals cannot honour
    denorm=ftz; one that flushes them (flushes_subnormals) can. A float64 reference
    (float64=True) computes the op itself, not the kernel's contract: nothing to refuse."""
    why = format_refusal(p, framework)
    if why or float64:
        return why
    c = p.contract
    if c.rounds_inputs():
        return (f"contract {c.types_string()} rounds inputs to {_opval.dtype_name(c.math)} inside the kernel: "
                f"{framework} on the CPU has no such math mode")
    for which in ("in_round", "acc_round", "dst_round"):
        if getattr(c, which) != _opval.rounding.rne:
            return f"{which}=rz: {framework} rounds to nearest only"
    if c.ftz and not flushes_subnormals:
        return f"denorm=ftz: {framework} on the CPU keeps subnormals"
    return None


def compute_dtype(p: _opval.Problem, float64: bool = False) -> _opval.dtype:
    """The type a framework case computes in: the contract's accumulation type (f16 for
    f16:f16:f16, f32, f64), f64 for integer contracts (exact for their i32 sums); f64 always
    for an adapter made as a float64 reference (float64=True)."""
    if float64:
        return _opval.dtype.f64
    acc = p.contract.acc
    if acc == _opval.dtype.tf32:
        return _opval.dtype.f32
    return acc if acc in (_opval.dtype.f16, _opval.dtype.f32, _opval.dtype.f64) else _opval.dtype.f64

