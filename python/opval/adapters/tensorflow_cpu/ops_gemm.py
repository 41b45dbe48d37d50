"""GEMM-like ops in TensorFlow: matmul (tf.linalg.matmul) and conv2d (tf.nn.conv2d), with
opval's epilogue, step by step in the compute type (adapters/epilogue.py, as the JAX and torch
adapters). Integer contracts run in float64, exact for the suites' i32 sums (every product and
sum is an integer below 2^53). TensorFloat-32 is turned off by the adapter (TensorFlow enables
it by default; it matters on GPUs only, but an f32 contract must never be run at TF32).
"""
from __future__ import annotations

import tensorflow as tf

from ..base import FrameworkOp
from ..epilogue import ArrayOps, gemm_epilogue
from ..host_choices import gemm_choices
from ..static import StaticProblem

_OPS = ArrayOps(
    scalar=lambda value, dtype: tf.constant(value, dtype=dtype),  # rounded once to dtype
    astype=tf.cast,
    clip=tf.clip_by_value,
    activations={
        "none": lambda z: z,
        "relu": tf.nn.relu,
        "gelu": lambda z: tf.nn.gelu(z, approximate=False),  # opval's gelu is the erf form
        "gelu_tanh": lambda z: tf.nn.gelu(z, approximate=True),
        "silu": tf.nn.silu,
    },
    reshape=tf.reshape,
)


def _dot_operand(t: tf.Tensor, zp: int) -> tf.Tensor:
    """A or B as the product uses it: integer operands widened to float64 (exact) with their
    zero point removed; float operands as they came (already in the compute type)."""
    if t.dtype.is_floating:
        return t
    wide = tf.cast(t, tf.float64)
    return wide - zp if zp != 0 else wide


def _epilogue(p: StaticProblem, x: dict, s: tf.Tensor, compute, channel_shape: tuple[int, ...]) -> tf.Tensor:
    return gemm_epilogue(p, x, s, compute, channel_shape, p.choice("int_dst", None), _OPS)


def _matmul(p: StaticProblem, x: dict, compute) -> list[tf.Tensor]:
    """A [batch_a..., m, k] @ B [batch_b..., k, n]: tf.linalg.matmul broadcasts the batch dims
    NumPy-style, as opval does; ta/tb/lda/ldb are strides of the logical views, resolved before
    the call."""
    a = _dot_operand(tf.convert_to_tensor(x["A"]), p.get("zp_a"))
    b = _dot_operand(tf.convert_to_tensor(x["B"]), p.get("zp_b"))
    return [_epilogue(p, x, tf.linalg.matmul(a, b), compute, (-1,))]


def _conv2d(p: StaticProblem, x: dict, compute) -> list[tf.Tensor]:
    """tf.nn.conv2d in TensorFlow's own layout (NHWC data, HWIO filters: the logical NCHW / OIHW
    arrays transposed) with the asymmetric padding given explicitly, dilations and groups (the
    filter's input depth ic/g). TensorFlow pads with zeros; an integer src pads after its zero
    point is removed, which is opval's padding with zp_a. Bias is the epilogue's."""
    src = tf.transpose(_dot_operand(tf.convert_to_tensor(x["src"]), p.get("zp_a")), (0, 2, 3, 1))
    wei = tf.transpose(_dot_operand(tf.convert_to_tensor(x["weights"]), p.get("zp_b")), (2, 3, 1, 0))
    s = tf.nn.conv2d(src, wei, strides=(p.get("sh"), p.get("sw")),
                     padding=[[0, 0], [p.get("pt"), p.get("pb")], [p.get("pl"), p.get("pr")], [0, 0]],
                     dilations=(p.get("dh"), p.get("dw")))
    return [_epilogue(p, x, tf.transpose(s, (0, 3, 1, 2)), compute, (1, -1, 1, 1))]


def _conv2d_supports(p) -> str | None:
    if p.get("oc") == 0 or p.get("ic") == 0:
        return "TensorFlow's Conv2D refuses a filter with no elements (oc=0 or ic=0)"
    return None


GEMM_OPS = {
    "matmul": FrameworkOp(_matmul),
    "conv2d": FrameworkOp(_conv2d, _conv2d_supports),
}

GEMM_CHOICES = {"matmul": gemm_choices, "conv2d": gemm_choices}
