"""Normalizations and reductions in JAX: softmax, log_softmax (jax.nn), layer_norm (through
jax.nn.standardize with a two-pass variance), rms_norm (jnp), reduce (jnp.sum/mean/max)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ..base import FrameworkOp
from ..static import StaticProblem


def _normalized_axes(p: StaticProblem, x: jax.Array) -> tuple[int, ...]:
    return tuple(range(x.ndim - p.get("norm_axes"), x.ndim))


def _layer_norm(p, x, compute):
    src = x["x"]
    axes = _normalized_axes(p, src)
    mean = jnp.mean(src, axis=axes, keepdims=True)
    # jnp.var centres first (two passes); standardize's own default, E[x^2] - E[x]^2, cancels.
    var = jnp.var(src, axis=axes, keepdims=True)
    y = jax.nn.standardize(src, axis=axes, mean=mean, variance=var, epsilon=p.get("eps"))
    if "gamma" in x:
        y = y * x["gamma"]
    if "beta" in x:
        y = y + x["beta"]
    if p.get("stats"):  # opval's mean and inv_std = 1/sqrt(var + eps), shaped as x with the normalized dims 1
        return [y, mean, lax.rsqrt(var + jnp.asarray(p.get("eps"), dtype=var.dtype))]
    return [y]


def _rms_norm(p, x, compute):
    src = x["x"]
    mean_square = jnp.mean(jnp.square(src), axis=_normalized_axes(p, src), keepdims=True)
    y = src * lax.rsqrt(mean_square + jnp.asarray(p.get("eps"), dtype=src.dtype))
    if "gamma" in x:
        y = y * x["gamma"]
    return [y]


def _reduce(p, x, compute):
    """sum, mean or max over `axes`; an empty reduction gives 0 (jnp.sum), NaN (jnp.mean: 0/0)
    and -inf (jnp.max's `initial`), as opval's.
    Known XLA disagreement (kept): on the CPU, a max reduction of 4096 elements or more can
    drop NaN (jnp.max(x, axis=1) of a float32 [16, 256] array with NaN in every row's last
    element gives -inf, with NaN in the first, the max of the rest); smaller ones propagate it."""
    src = x["x"]
    if not jnp.issubdtype(src.dtype, jnp.floating):
        src = src.astype(jnp.float64)  # i32 sums, exactly
    axes = tuple(sorted({a % src.ndim for a in p.get("axes")})) if src.ndim else ()
    keep = p.get("keepdims")
    kind = p.get("kind")
    if kind == "sum":
        return [jnp.sum(src, axis=axes, keepdims=keep)]
    if kind == "mean":
        return [jnp.mean(src, axis=axes, keepdims=keep)]
    return [jnp.max(src, axis=axes, keepdims=keep, initial=-jnp.inf)]


NORM_OPS = {
    "softmax": FrameworkOp(lambda p, x, compute: [jax.nn.softmax(x["x"], axis=p.get("axis"))]),
    "log_softmax": FrameworkOp(lambda p, x, compute: [jax.nn.log_softmax(x["x"], axis=p.get("axis"))]),
    "layer_norm": FrameworkOp(_layer_norm),
    "rms_norm": FrameworkOp(_rms_norm),
    "reduce": FrameworkOp(_reduce),
}
