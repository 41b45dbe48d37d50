"""Scaled dot-product attention in JAX: jax.nn.dot_product_attention where it expresses the
problem, else the explicit softmax(scale*QK^T + bias) V in jnp.

jax.nn.dot_product_attention (its XLA implementation) takes GQA (query head h reads kv head
h // (H/Hkv), as opval), is_causal (top-left: j <= i), an additive bias, a boolean mask (the
bottom-right causal j <= i + lk - lq) and key_value_seq_lengths. It cannot take:
  - dv != d: it requires V shaped as K;
  - a query row with no visible key (a key length of 0; bottom-right causal with lq > lk): it
    masks by replacing logits with -0.7 * float32 max, so such a row averages V uniformly,
    where opval gives 0.
Those cases take the explicit path: QK^T with jnp.einsum, jax.nn.softmax(where=visible)
(masked logits never enter; a row with no visible key is all 0, opval's semantics), and
P V with jnp.einsum. Which path a case takes is decided on the host from the problem and its
key lengths (attention_choices), and is part of the jit key.
The contract's `mid` rounding of P is not modelled (P in f32 is within the bound), as in the
torch adapter; the final rounding to dst is the adapter's.
Known JAX disagreement (kept, not worked around): a row whose visible keys all have a -inf
bias (opval's bias fill has -inf entries; with causal and key-length masks leaving a row few
keys, all of them can be -inf) is 0 in opval (and in torch's SDPA). dot_product_attention
gives it a finite, wrong value: the masked keys' -0.7 * float32 max logits beat the visible
-inf ones, so the row averages V over the keys the mask hides; on the explicit path
jax.nn.softmax of a row whose included logits are all -inf is NaN.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _opval
from ..base import ATTENTION_UNMAPPED, FrameworkOp, attribute_refusal
from .static import StaticProblem


def _sizes(p) -> dict[str, int]:
    """b, h, hkv, lq, lk, d, dv with opval's defaults resolved (hkv=0 -> h, dv=0 -> d)."""
    s = {name: p.get(name) for name in ("b", "h", "hkv", "lq", "lk", "d", "dv")}
    s["hkv"] = s["hkv"] or s["h"]
    s["dv"] = s["dv"] or s["d"]
    return s


def _scale(p) -> float:
    return p.get("scale") or 1.0 / math.sqrt(p.get("d"))


def attention_choices(p: _opval.Problem, x: dict[str, np.ndarray]) -> dict[str, str]:
    """The path a case takes: 'jax.nn' (dot_product_attention) or 'explicit' (see above)."""
    s = _sizes(p)
    keyless_rows = (p.get("causal") == "bottom_right" and s["lq"] > s["lk"]) or (
        p.get("key_lengths") and bool((x["key_lengths"] <= 0).any()))
    return {"path": "explicit" if s["dv"] != s["d"] or keyless_rows else "jax.nn"}


def _causal_visible(p: StaticProblem, lq: int, lk: int) -> jax.Array | None:
    """[lq, lk], True where key j is visible to query i under the causal mask; None without one."""
    causal = p.get("causal")
    if causal == "none":
        return None
    offset = 0 if causal == "top_left" else lk - lq  # bottom_right: j <= i + lk - lq
    return jnp.tril(jnp.ones((lq, lk), dtype=bool), k=offset)


def _jax_nn(p: StaticProblem, x: dict, s: dict[str, int]) -> jax.Array:
    """jax.nn.dot_product_attention on [b, l, heads, d] views of opval's [b, heads, l, d]."""
    q, k, v = (jnp.swapaxes(x[name], 1, 2) for name in ("q", "k", "v"))
    kwargs = {"scale": _scale(p), "implementation": "xla"}
    if p.get("causal") == "top_left":
        kwargs["is_causal"] = True
    elif p.get("causal") == "bottom_right":
        kwargs["mask"] = _causal_visible(p, s["lq"], s["lk"])[None, None]
    if "mask" in x:
        kwargs["bias"] = x["mask"][None, None]  # [lq, lk], broadcast over b and h
    if "key_lengths" in x:
        kwargs["key_value_seq_lengths"] = x["key_lengths"].astype(jnp.int32)
    return jnp.swapaxes(jax.nn.dot_product_attention(q, k, v, **kwargs), 1, 2)


def _explicit(p: StaticProblem, x: dict, s: dict[str, int], compute) -> jax.Array:
    """softmax(scale * Q K^T + bias, where=visible) V, query heads grouped by their kv head."""
    b, h, hkv, lq, lk = s["b"], s["h"], s["hkv"], s["lq"], s["lk"]
    q = x["q"].reshape(b, hkv, h // hkv, lq, s["d"])
    dot = {"precision": lax.Precision.HIGHEST, "preferred_element_type": compute}
    logits = jnp.einsum("bkgqd,bksd->bkgqs", q, x["k"], **dot) * jnp.asarray(_scale(p), dtype=compute)
    if "mask" in x:
        logits = logits + x["mask"]
    visible = _causal_visible(p, lq, lk)
    if "key_lengths" in x:
        keys = (jnp.arange(lk)[None, :] < x["key_lengths"][:, None])[:, None, None, None, :]  # [b,1,1,1,lk]
        visible = keys if visible is None else keys & visible
    probs = jax.nn.softmax(logits, axis=-1, where=visible)
    out = jnp.einsum("bkgqs,bksv->bkgqv", probs, x["v"], **dot)
    return out.reshape(b, h, lq, s["dv"])


def _attention(p: StaticProblem, x: dict, compute) -> list[jax.Array]:
    s = _sizes(p)
    if p.choice("path") == "jax.nn":
        return [_jax_nn(p, x, s)]
    return [_explicit(p, x, s, compute)]


ATTENTION_OPS = {
    "attention": FrameworkOp(_attention, lambda p: attribute_refusal(p, ATTENTION_UNMAPPED)),
}

ATTENTION_CHOICES = {"attention": attention_choices}
