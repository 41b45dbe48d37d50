"""Scaled dot-product attention in JAX: jax.nn.dot_product_attention where it expresses the
problem, else the explicit softmax(scale*QK^T + bias) V in jnp.

jax.nn.dot_product_attention (its XLA implementation) takes GQA (query head h reads kv head
h // (H/Hkv), as opval), is_causal (top-left: j <= i), an additive bias (any mask_shape, as
[b|1, h|1, lq, lk]), a boolean mask (the bottom-right causal j <= i + lk - lq, sliding
windows) and key_value_seq_lengths. It cannot take:
  - dv != d: it requires V shaped as K;
  - softcap: it has no score soft-capping;
  - a query row with no visible key (a key length of 0; bottom-right causal with lq > lk; a
    window that hides every key from a row): it masks by replacing logits with -0.7 * float32
    max, so such a row averages V uniformly, where opval gives 0.
Those cases take the explicit path: QK^T with jnp.einsum, softcap·tanh(logits/softcap),
the bias, jax.nn.softmax(where=visible)
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


import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _opval
from ..base import FrameworkOp, attention_bias_4d, attention_has_keyless_rows, attention_scale, attention_sizes, attention_visible
from ..static import StaticProblem


def attention_choices(p: _opval.Problem, x: dict[str, np.ndarray]) -> dict[str, str]:
    """The path a case takes: 'jax.nn' (dot_product_attention) or 'explicit' (see above)."""
    s = attention_sizes(p)
    explicit = s["dv"] != s["d"] or p.get("softcap") != 0.0 or attention_has_keyless_rows(p, x.get("key_lengths"))
    return {"path": "explicit" if explicit else "jax.nn"}


def _visible(p: StaticProblem, lq: int, lk: int) -> jax.Array | None:
    """[lq, lk], True where key j is visible to query i under the causal mask and the sliding
    window; None when every key is."""
    visible = attention_visible(p, lq, lk)
    return None if visible is None else jnp.asarray(visible)


def _jax_nn(p: StaticProblem, x: dict, s: dict[str, int]) -> jax.Array:
    """jax.nn.dot_product_attention on [b, l, heads, d] views of opval's [b, heads, l, d]."""
    q, k, v = (jnp.swapaxes(x[name], 1, 2) for name in ("q", "k", "v"))
    kwargs = {"scale": attention_scale(p), "implementation": "xla"}
    window = p.get("window_left") >= 0 or p.get("window_right") >= 0
    if p.get("causal") == "top_left" and not window:
        kwargs["is_causal"] = True
    elif (visible := _visible(p, s["lq"], s["lk"])) is not None:
        kwargs["mask"] = visible[None, None]
    if "mask" in x:
        kwargs["bias"] = attention_bias_4d(x["mask"])  # broadcast over b and h
    if "key_lengths" in x:
        kwargs["key_value_seq_lengths"] = x["key_lengths"].astype(jnp.int32)
    return jnp.swapaxes(jax.nn.dot_product_attention(q, k, v, **kwargs), 1, 2)


def _grouped_bias(bias: jax.Array, h: int, hkv: int) -> jax.Array:
    """The [b|1, h|1, lq, lk] bias as [b|1, hkv|1, h/hkv|1, lq, lk], the grouped logits' layout."""
    bias = attention_bias_4d(bias)
    groups = (hkv, h // hkv) if bias.shape[1] == h else (1, 1)
    return bias.reshape((bias.shape[0], *groups, *bias.shape[2:]))


def _explicit(p: StaticProblem, x: dict, s: dict[str, int], compute) -> jax.Array:
    """softmax(cap(scale * Q K^T) + bias, where=visible) V, query heads grouped by their kv head."""
    b, h, hkv, lq, lk = s["b"], s["h"], s["hkv"], s["lq"], s["lk"]
    q = x["q"].reshape(b, hkv, h // hkv, lq, s["d"])
    dot = {"precision": lax.Precision.HIGHEST, "preferred_element_type": compute}
    logits = jnp.einsum("bkgqd,bksd->bkgqs", q, x["k"], **dot) * jnp.asarray(attention_scale(p), dtype=compute)
    if (cap := p.get("softcap")) != 0.0:
        cap = jnp.asarray(cap, dtype=compute)
        logits = cap * jnp.tanh(logits / cap)
    if "mask" in x:
        logits = logits + _grouped_bias(x["mask"], h, hkv)
    visible = _visible(p, lq, lk)
    if "key_lengths" in x:
        keys = (jnp.arange(lk)[None, :] < x["key_lengths"][:, None])[:, None, None, None, :]  # [b,1,1,1,lk]
        visible = keys if visible is None else keys & visible
    probs = jax.nn.softmax(logits, axis=-1, where=visible)
    out = jnp.einsum("bkgqs,bksv->bkgqv", probs, x["v"], **dot)
    return out.reshape(b, h, lq, s["dv"])


def _attention(p: StaticProblem, x: dict, compute) -> list[jax.Array]:
    s = attention_sizes(p)
    if p.choice("path") == "jax.nn":
        return [_jax_nn(p, x, s)]
    return [_explicit(p, x, s, compute)]


ATTENTION_OPS = {
    "attention": FrameworkOp(_attention),
}

ATTENTION_CHOICES = {"attention": attention_choices}
