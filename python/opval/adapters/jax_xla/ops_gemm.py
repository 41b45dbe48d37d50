"""GEMM-like ops in JAX: matmul (jnp.matmul) and conv2d (lax.conv_general_dilated), with
opval's epilogue, step by step in the compute type as the torch adapter's ops_gemm.py documents
(src/ops/common_gemm/epilogue.hpp):
    s   = sum_k (a - zp_a) * (b - zp_b)                (zero points only on integer contracts)
    z   = (alpha * scale_a * scale_b[ch]) * s + beta * C + bias[ch]
    y   = act(z) + residual
    dst = y, or for an integer dst y / scale_dst + zp_dst clamped to its range (the adapter rounds)
Both products use precision=HIGHEST with preferred_element_type = the compute type: on the CPU
XLA multiplies f32 in f32 (no TF32), and integer contracts run in float64, exact for the
suites' i32 sums (every product and sum is an integer below 2^53).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ... import _opval
from ..base import FrameworkOp
from .static import StaticProblem

_ACTIVATIONS = {
    "none": lambda z: z,
    "relu": jax.nn.relu,
    "gelu": lambda z: jax.nn.gelu(z, approximate=False),  # opval's gelu is the erf form
    "gelu_tanh": lambda z: jax.nn.gelu(z, approximate=True),
    "silu": jax.nn.silu,
}


def _scalar(value: float, compute) -> jax.Array:
    """An attribute rounded once to the compute type, as a kernel holding it in its epilogue type."""
    return jnp.asarray(value, dtype=compute)


def _dot_operand(t: jax.Array, zp: int) -> jax.Array:
    """A or B as the dot product uses it: integer operands widened to float64 (exact) with
    their zero point removed; float operands as they came (already in the compute type)."""
    if jnp.issubdtype(t.dtype, jnp.floating):
        return t
    wide = t.astype(jnp.float64)
    return wide - zp if zp != 0 else wide


def _dequant_factor(p: StaticProblem, x: dict, compute) -> jax.Array | None:
    """alpha * scale_a * scale_b[ch] (folded as (alpha*scale_a)*scale_b), per channel as a
    1-D array or per tensor as a 0-d one; None when it is 1."""
    head = p.get("alpha") * p.get("scale_a")
    if p.get("scale_b_mode") == "per_channel":
        # The scale_b operand already holds scale_b * its per-channel values (opval's fill).
        return _scalar(head, compute) * x["scale_b"].astype(compute)
    factor = head * p.get("scale_b")
    return None if factor == 1.0 else _scalar(factor, compute)


def _epilogue(p: StaticProblem, x: dict, s: jax.Array, compute, channel_shape: tuple[int, ...]) -> jax.Array:
    """From the dot products s to the value before the final rounding to dst.
    channel_shape: how a per-channel vector [channels] broadcasts against s."""
    z = s.astype(compute)
    factor = _dequant_factor(p, x, compute)
    if factor is not None:
        z = z * (factor.reshape(channel_shape) if factor.ndim else factor)
    beta = p.get("beta") if p.has("beta") else 0.0
    if beta != 0.0:
        z = z + _scalar(beta, compute) * x["C"]
    if p.get("bias"):
        z = z + x["bias"].reshape(channel_shape)
    y = _ACTIVATIONS[p.get("act")](z)
    if p.get("residual"):
        y = y + x["residual"]
    return _quantize_dst(p, y)


def gemm_choices(p: _opval.Problem, x: dict) -> dict:
    """An integer output type enters the computation (the quantization below); a float one
    only the host's final rounding, so it stays out of the jit key."""
    dst = p.contract.dst
    return {} if _opval.dtype_info(dst).is_float else {"int_dst": dst}


def _quantize_dst(p: StaticProblem, y: jax.Array) -> jax.Array:
    """Integer dst: y / scale_dst + zp_dst, clamped to the type's range as opval's reference
    does (the adapter's round-half-even + saturate then gives the same integers)."""
    dst = p.choice("int_dst", None)
    if dst is None:
        return y
    info = _opval.dtype_info(dst)
    scale_dst, zp_dst = p.get("scale_dst"), p.get("zp_dst")
    if scale_dst != 1.0:
        y = y / _scalar(scale_dst, y.dtype)
    if zp_dst != 0:
        y = y + _scalar(float(zp_dst), y.dtype)
    return jnp.clip(y, info.lowest, info.max)


def _matmul(p: StaticProblem, x: dict, compute) -> list[jax.Array]:
    """A [batch_a..., m, k] @ B [batch_b..., k, n], the batch dims broadcast NumPy-style as
    opval does; ta/tb/lda/ldb are strides of the logical views, resolved before the call."""
    a = _dot_operand(x["A"], p.get("zp_a"))
    b = _dot_operand(x["B"], p.get("zp_b"))
    s = jnp.matmul(a, b, precision=lax.Precision.HIGHEST, preferred_element_type=compute)
    return [_epilogue(p, x, s, compute, (-1,))]


def _conv2d(p: StaticProblem, x: dict, compute) -> list[jax.Array]:
    """lax.conv_general_dilated on logical NCHW / OIHW arrays (layout=nhwc is only strides,
    resolved before the call) with the asymmetric padding as (low, high) pairs, rhs_dilation
    and feature_group_count. XLA pads with zeros; an integer src pads after its zero point is
    removed, which is opval's padding with zp_a. Bias is the epilogue's, added after the scales."""
    src = _dot_operand(x["src"], p.get("zp_a"))
    wei = _dot_operand(x["weights"], p.get("zp_b"))
    s = lax.conv_general_dilated(
        src, wei,
        window_strides=(p.get("sh"), p.get("sw")),
        padding=((p.get("pt"), p.get("pb")), (p.get("pl"), p.get("pr"))),
        rhs_dilation=(p.get("dh"), p.get("dw")),
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
        feature_group_count=p.get("g"),
        precision=lax.Precision.HIGHEST,
        preferred_element_type=compute,
    )
    return [_epilogue(p, x, s, compute, (1, -1, 1, 1))]


GEMM_OPS = {
    "matmul": FrameworkOp(_matmul),
    "conv2d": FrameworkOp(_conv2d),
}

GEMM_CHOICES = {"matmul": gemm_choices, "conv2d": gemm_choices}
