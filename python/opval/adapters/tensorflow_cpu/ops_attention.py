"""Scaled dot-product attention in TensorFlow. TensorFlow has no attention op of its own (Keras's
MultiHeadAttention layer is built from these same operations), so the adapter writes it with
tf.einsum and tf.nn.softmax: softmax(cap(scale * Q K^T) + bias) V, the query heads grouped by
their kv head (GQA: query head h reads kv head h // (H/Hkv), as opval), the causal mask (either
corner), the sliding window and the key lengths applied by setting hidden logits to -inf
before the softmax. A query row with no visible key has no softmax; it is 0, opval's semantics.
The contract's `mid` rounding of P is not modelled (P in the compute type is within the
bound), as in the torch and JAX adapters; the final rounding to dst is the adapter's.
A row whose visible keys all have a -inf bias (opval's bias fill has some) is NaN in TensorFlow
(the softmax of all -inf logits), 0 in opval: a real difference, kept (docs/REFERENCES.md).
"""
from __future__ import annotations

import math

import tensorflow as tf

from ..base import FrameworkOp, attention_scale, attention_sizes, attention_visible
from ..static import StaticProblem


def _grouped_bias(bias: tf.Tensor, h: int, hkv: int) -> tf.Tensor:
    """The [b|1, h|1, lq, lk] bias as [b|1, hkv|1, h/hkv|1, lq, lk], the grouped logits' layout."""
    bias = tf.convert_to_tensor(bias)
    if bias.shape.rank == 2:  # mask_shape=lq_lk: [lq, lk], broadcast over b and h (attention_bias_4d's, for tf.Tensor)
        bias = tf.reshape(bias, (1, 1, *bias.shape))
    groups = (hkv, h // hkv) if bias.shape[1] == h else (1, 1)
    return tf.reshape(bias, (bias.shape[0], *groups, *bias.shape[2:]))


def _visible(p: StaticProblem, x: dict, s: dict[str, int]) -> tf.Tensor | None:
    """Booleans broadcasting against the grouped logits [b, hkv, g, lq, lk]: the causal mask
    and window ([lq, lk], from the attributes) and the key lengths ([b, 1, 1, 1, lk]); None when
    every key is visible."""
    visible = attention_visible(p, s["lq"], s["lk"])
    visible = None if visible is None else tf.constant(visible)
    if "key_lengths" in x:
        lengths = tf.cast(tf.convert_to_tensor(x["key_lengths"]), tf.int64)
        keys = tf.range(s["lk"], dtype=tf.int64)[None, :] < lengths[:, None]
        keys = tf.reshape(keys, (-1, 1, 1, 1, s["lk"]))
        visible = keys if visible is None else tf.logical_and(keys, visible)
    return visible


def _attention(p: StaticProblem, x: dict, compute) -> list[tf.Tensor]:
    s = attention_sizes(p)
    b, h, hkv, lq = s["b"], s["h"], s["hkv"], s["lq"]
    q = tf.reshape(x["q"], (b, hkv, h // hkv, lq, s["d"]))
    logits = tf.einsum("bkgqd,bksd->bkgqs", q, x["k"]) * tf.constant(attention_scale(p), dtype=compute)
    if (cap := p.get("softcap")) != 0.0:
        cap = tf.constant(cap, dtype=compute)
        logits = cap * tf.math.tanh(logits / cap)
    if "mask" in x:
        logits = logits + _grouped_bias(x["mask"], h, hkv)
    visible = _visible(p, x, s)
    if visible is not None:
        logits = tf.where(visible, logits, tf.constant(-math.inf, dtype=compute))
    probs = tf.nn.softmax(logits, axis=-1)
    if visible is not None:  # a row with no visible key: 0, not the NaN of an all -inf softmax
        probs = tf.where(tf.reduce_any(visible, axis=-1, keepdims=True), probs, tf.zeros((), dtype=compute))
    out = tf.einsum("bkgqs,bksv->bkgqv", probs, x["v"])
    return [tf.reshape(out, (b, h, lq, s["dv"]))]


ATTENTION_OPS = {
    "attention": FrameworkOp(_attention),
}
