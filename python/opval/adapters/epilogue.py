"""opval's GEMM epilogue (src/ops/common_gemm/epilogue.hpp), step by step in the compute type,
written once for every framework whose arrays support + * /; each adapter brings
the few operations that differ (ArrayOps):
    z   = (alpha * scale_a * scale_b[ch]) * s + beta * C + bias[ch]
    y   = act(z) + residual
    dst = y                                              (float dst)
    dst = y / scale_dst + zp_dst, clamped to dst's range (integer dst; the adapter rounds)
`ch` is the output channel: matmul's n (last dim), conv2d's oc (dim 1)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .. import _opval


@dataclass(frozen=True)
class ArrayOps:
    """One framework's array operations the epilogue needs."""

    scalar: Callable[[float, Any], Any]  # (value, dtype) -> a 0-d array, the value rounded once to dtype
    astype: Callable[[Any, Any], Any]    # (array, dtype) -> array
    clip: Callable[[Any, float, float], Any]
    activations: Mapping[str, Callable[[Any], Any]]  # none relu gelu (erf form) gelu_tanh silu
    reshape: Callable[[Any, tuple[int, ...]], Any] = lambda a, shape: a.reshape(shape)  # TensorFlow's tensors have no .reshape


def dequant_factor(p, x: dict, compute, ops: ArrayOps):
    """alpha * scale_a * scale_b[ch] (the spec folds it as (alpha*scale_a)*scale_b), per channel
    as a 1-D array [channels] or per tensor as a 0-d one; None when it is 1."""
    head = p.get("alpha") * p.get("scale_a")
    if p.get("scale_b_mode") == "per_channel":
        # The scale_b operand already holds scale_b * its per-channel values (opval's fill).
        return ops.scalar(head, compute) * ops.astype(x["scale_b"], compute)
    factor = head * p.get("scale_b")
    return None if factor == 1.0 else ops.scalar(factor, compute)


def quantize_dst(p, y, int_dst: _opval.dtype | None, ops: ArrayOps):
    """Integer dst: y / scale_dst + zp_dst, clamped to the type's range as opval's reference
    does (the final round-half-even + saturate then gives the same integers)."""
    if int_dst is None:
        return y
    info = _opval.dtype_info(int_dst)
    scale_dst, zp_dst = p.get("scale_dst"), p.get("zp_dst")
    if scale_dst != 1.0:
        y = y / ops.scalar(scale_dst, y.dtype)
    if zp_dst != 0:
        y = y + ops.scalar(float(zp_dst), y.dtype)
    return ops.clip(y, info.lowest, info.max)


def gemm_epilogue(p, x: dict, s, compute, channel_shape, int_dst: _opval.dtype | None, ops: ArrayOps):
    """From the dot products s to the value before the final rounding to dst;
    channel_shape: how a per-channel vector [channels] broadcasts against s."""
    z = ops.astype(s, compute)
    factor = dequant_factor(p, x, compute, ops)
    if factor is not None:
        z = z * (ops.reshape(factor, channel_shape) if factor.ndim else factor)
    beta = p.get("beta") if p.has("beta") else 0.0
    if beta != 0.0:
        z = z + ops.scalar(beta, compute) * x["C"]
    if p.get("bias"):
        z = z + ops.reshape(x["bias"], channel_shape)
    y = ops.activations[p.get("act")](z)
    if p.get("residual"):
        y = y + x["residual"]
    return quantize_dst(p, y, int_dst, ops)
