"""Pooling in TensorFlow: max_pool2d and avg_pool2d (tf.nn, in TensorFlow's NHWC layout) and
global_avg_pool (tf.reduce_mean over H and W).

tf.nn's pools take no dilation and no ceil_mode: such cases are refused. max_pool2d pads
with -inf first (tf.pad; never a maximum, since no window is padding alone) and pools VALID.
avg_pool2d pools VALID and divides by the whole window: unpadded windows, or count_include_pad
with zero padding; a padded window that leaves the padding out of the divisor is refused.
Integer inputs pool in float64 (exact)."""
from __future__ import annotations

import math

import tensorflow as tf

from ... import _opval
from ..base import FrameworkOp


def _refusal(p: _opval.Problem, op: str) -> str | None:
    if p.has("dh") and (p.get("dh") != 1 or p.get("dw") != 1):
        return f"dilation: TensorFlow's {op} has none"
    if p.get("ceil_mode"):
        return f"ceil_mode: TensorFlow's {op} has no partial last window"
    return None


def _padded(p, x: tf.Tensor, value: float) -> tf.Tensor:
    """x in NHWC (integers in float64), padded as the problem says with `value`."""
    src = tf.convert_to_tensor(x)
    if not src.dtype.is_floating:
        src = tf.cast(src, tf.float64)
    src = tf.transpose(src, (0, 2, 3, 1))
    pads = [[0, 0], [p.get("pt"), p.get("pb")], [p.get("pl"), p.get("pr")], [0, 0]]
    return tf.pad(src, pads, constant_values=value) if any(a or b for a, b in pads) else src


def _pool(p, x: dict, pool, value: float) -> list[tf.Tensor]:
    y = pool(_padded(p, x["x"], value), (p.get("kh"), p.get("kw")), (p.get("sh"), p.get("sw")), "VALID")
    return [tf.transpose(y, (0, 3, 1, 2))]


def _avg_supports(p: _opval.Problem) -> str | None:
    padded = any(p.get(k) for k in ("pt", "pb", "pl", "pr"))
    if padded and not p.get("count_include_pad"):
        return "padding left out of the divisor: TensorFlow's avg_pool2d has explicit padding for max pooling only"
    return _refusal(p, "avg_pool2d")


POOL_OPS = {
    "max_pool2d": FrameworkOp(lambda p, x, compute: _pool(p, x, tf.nn.max_pool2d, -math.inf),
                              lambda p: _refusal(p, "max_pool2d")),
    "avg_pool2d": FrameworkOp(lambda p, x, compute: _pool(p, x, tf.nn.avg_pool2d, 0.0), _avg_supports),
    "global_avg_pool": FrameworkOp(lambda p, x, compute: [tf.reduce_mean(x["x"], axis=(2, 3), keepdims=True)]),
}
