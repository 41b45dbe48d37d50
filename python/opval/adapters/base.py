"""What every framework adapter shares: the per-op table, and the opval backend around it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

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


def attention_sizes(p) -> dict[str, int]:
    """b, h, hkv, lq, lk, d, dv with opval's defaults resolved (hkv=0 -> h, dv=0 -> d)."""
    s = {name: p.get(name) for name in ("b", "h", "hkv", "lq", "lk", "d", "dv")}
    s["hkv"] = s["hkv"] or s["h"]
    s["dv"] = s["dv"] or s["d"]
    return s


def attention_scale(p) -> float:
    """The scale of Q K^T: the attribute, or 1/sqrt(d) when it is 0."""
    return p.get("scale") or 1.0 / math.sqrt(p.get("d"))


def attention_visible(p, lq: int, lk: int) -> np.ndarray | None:
    """[lq, lk] booleans, True where query i attends key j under opval's causal mask and sliding
    window (docs/ops/attention.md): with off = 0 for causal=top_left and lk - lq otherwise, key
    j is visible when j <= i + off (causal) and i + off - window_left <= j <= i + off +
    window_right (each side only when >= 0). None when every key is visible. Key lengths and
    the bias are the adapters' own (they differ per batch)."""
    causal, left, right = p.get("causal"), p.get("window_left"), p.get("window_right")
    if causal == "none" and left < 0 and right < 0:
        return None
    diagonal = np.arange(lq)[:, None] + (0 if causal == "top_left" else lk - lq)
    key = np.arange(lk)[None, :]
    visible = np.ones((lq, lk), dtype=bool)
    if causal != "none":
        visible &= key <= diagonal
    if left >= 0:
        visible &= key >= diagonal - left
    if right >= 0:
        visible &= key <= diagonal + right
    return visible


def attention_has_keyless_rows(p, key_lengths: np.ndarray | None) -> bool:
    """Whether some query row sees no key (its output is 0 in opval): a key length of 0, or a
    causal mask or window that hides every key from a row."""
    visible = attention_visible(p, p.get("lq"), p.get("lk"))
    return bool(key_lengths is not None and (key_lengths <= 0).any()) or (
        visible is not None and not visible.any(axis=1).all())


def attention_bias_4d(bias):
    """The bias as [b|1, h|1, lq, lk] (mask_shape=lq_lk gives [lq, lk]), as SDPA's and ONNX's
    attn_mask broadcast it over batch and query heads."""
    return bias.reshape((1, 1) + tuple(bias.shape)) if bias.ndim == 2 else bias


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

