"""Normalizations and reductions in TensorFlow: softmax, log_softmax (tf.nn), layer_norm
(tf.nn.moments, a two-pass variance, then tf.nn.batch_normalization, the normalization Keras's
LayerNormalization layer calls), rms_norm (tf.math: TensorFlow has no RMS normalization op),
reduce (tf.reduce_sum / reduce_mean / reduce_max)."""
from __future__ import annotations

import tensorflow as tf

from ..base import FrameworkOp
from ..static import StaticProblem


def _normalized_axes(p: StaticProblem, x: tf.Tensor) -> list[int]:
    return list(range(x.shape.rank - p.get("norm_axes"), x.shape.rank))


def _layer_norm(p, x, compute):
    """tf.nn.batch_normalization computes x * inv + (beta - mean * inv), inv = gamma *
    rsqrt(var + eps): TensorFlow's own arrangement, not (x - mean) * inv."""
    src = x["x"]
    mean, var = tf.nn.moments(src, axes=_normalized_axes(p, src), keepdims=True)
    eps = p.get("eps")
    y = tf.nn.batch_normalization(src, mean, var, offset=x.get("beta"), scale=x.get("gamma"), variance_epsilon=eps)
    if p.get("stats"):  # opval's mean and inv_std = 1/sqrt(var + eps), shaped as x with the normalized dims 1
        return [y, mean, tf.math.rsqrt(var + tf.constant(eps, dtype=var.dtype))]
    return [y]


def _rms_norm(p, x, compute):
    src = x["x"]
    mean_square = tf.reduce_mean(tf.math.square(src), axis=_normalized_axes(p, src), keepdims=True)
    y = src * tf.math.rsqrt(mean_square + tf.constant(p.get("eps"), dtype=src.dtype))
    if "gamma" in x:
        y = y * x["gamma"]
    return [y]


def _reduce(p, x, compute):
    """sum, mean or max over `axes`; an empty reduction gives 0, NaN (0/0) and -inf, as opval's."""
    src = tf.convert_to_tensor(x["x"])
    if not src.dtype.is_floating:
        src = tf.cast(src, tf.float64)  # i32 sums, exactly
    rank = src.shape.rank
    axes = sorted({a % rank for a in p.get("axes")}) if rank else []
    reduce = {"sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max}[p.get("kind")]
    return [reduce(src, axis=axes, keepdims=bool(p.get("keepdims")))]


NORM_OPS = {
    "softmax": FrameworkOp(lambda p, x, compute: [tf.nn.softmax(x["x"], axis=p.get("axis"))]),
    "log_softmax": FrameworkOp(lambda p, x, compute: [tf.nn.log_softmax(x["x"], axis=p.get("axis"))]),
    "layer_norm": FrameworkOp(_layer_norm),
    "rms_norm": FrameworkOp(_rms_norm),
    "reduce": FrameworkOp(_reduce),
}
