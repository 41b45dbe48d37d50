"""Element-wise ops in TensorFlow: relu, gelu (both forms), silu, tanh, erf (tf.nn, tf.math),
add, mul, div (integer contracts of add and mul in the operands' own type, which TensorFlow
wraps modulo 2^bits, as the contract does), cast."""
from __future__ import annotations

import tensorflow as tf

from ..base import FrameworkOp
from ..host_choices import cast_choices
from ..static import StaticProblem


def _cast(p: StaticProblem, x: dict, compute) -> list[tf.Tensor]:
    """x * scale in the accumulation type (scale rounded to it), clamped as cast_choices says;
    the final rounding is the adapter's."""
    y = tf.cast(x["x"], compute)  # integer and bool sources widen here
    scale = p.get("scale")
    if scale != 1:
        y = y * tf.constant(scale, dtype=compute)
    clamp = p.choice("clamp")
    if clamp is not None:
        lowest, highest, infinities_too = clamp
        clipped = tf.clip_by_value(y, tf.constant(lowest, compute), tf.constant(highest, compute))
        # Left as they are: NaN always, and the infinities unless the type has none (f8_e4m3).
        kept = tf.math.is_nan(y) if infinities_too else tf.logical_not(tf.math.is_finite(y))
        y = tf.where(kept, y, clipped)
    return [y]


ELTWISE_OPS = {
    "relu": FrameworkOp(lambda p, x, compute: [tf.nn.relu(x["x"])]),
    "gelu": FrameworkOp(lambda p, x, compute: [tf.nn.gelu(x["x"], approximate=p.get("approximate") == "tanh")]),
    "silu": FrameworkOp(lambda p, x, compute: [tf.nn.silu(x["x"])]),
    "tanh": FrameworkOp(lambda p, x, compute: [tf.math.tanh(x["x"])]),
    "erf": FrameworkOp(lambda p, x, compute: [tf.math.erf(x["x"])]),
    "add": FrameworkOp(lambda p, x, compute: [tf.math.add(x["a"], x["b"])]),
    "mul": FrameworkOp(lambda p, x, compute: [tf.math.multiply(x["a"], x["b"])]),
    "div": FrameworkOp(lambda p, x, compute: [tf.math.divide(x["a"], x["b"])]),
    "cast": FrameworkOp(_cast),
}

ELTWISE_CHOICES = {"cast": cast_choices}
