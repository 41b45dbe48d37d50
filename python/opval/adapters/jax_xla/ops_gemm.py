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

from ..base import FrameworkOp
from ..epilogue import ArrayOps, gemm_epilogue
from ..host_choices import gemm_choices
from ..static import StaticProblem

_OPS = ArrayOps(
    scalar=lambda value, dtype: jnp.asarray(value, dtype=dtype),  # rounded once to dtype
    astype=lambda a, dtype: a.astype(dtype),
    clip=jnp.clip,
    activations={
        "none": lambda z: z,
        "relu": jax.nn.relu,
        "gelu": lambda z: jax.nn.gelu(z, approximate=False),  # opval's gelu is the erf form
        "gelu_tanh": lambda z: jax.nn.gelu(z, approximate=True),
        "silu": jax.nn.silu,
    },
)


def _dot_operand(t: jax.Array, zp: int) -> jax.Array:
    """A or B as the dot product uses it: integer operands widened to float64 (exact) with
    their zero point removed; float operands as they came (already in the compute type)."""
    if jnp.issubdtype(t.dtype, jnp.floating):
        return t
    wide = t.astype(jnp.float64)
    return wide - zp if zp != 0 else wide


def _epilogue(p: StaticProblem, x: dict, s: jax.Array, compute, channel_shape: tuple[int, ...]) -> jax.Array:
    return gemm_epilogue(p, x, s, compute, channel_shape, p.choice("int_dst", None), _OPS)


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
