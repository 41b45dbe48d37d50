"""Scaled dot-product attention in torch: F.scaled_dot_product_attention with GQA, both causal
alignments, an additive bias and per-batch key lengths.

Every attention problem is one SDPA call, so that torch's own kernel (on the CPU its flash
kernel or the math fallback, whichever SDPA picks) is what gets tested:
  - grouped-query heads: enable_gqa=True (query head h reads kv head h // (H/Hkv), as opval);
  - causal=top_left alone: is_causal=True (torch's causal is j <= i);
  - causal=bottom_right alone: torch's own causal_lower_right(lq, lk) bias (j <= i + lk - lq);
  - otherwise one mask: boolean (True = visible) from causal, the sliding window and
    key_lengths, or, with mask=bias, the float bias (any mask_shape: [lq, lk], [b|1, h|1, lq,
    lk], which SDPA broadcasts) with -inf at the invisible keys (SDPA adds it to scale*QK^T).
softcap is refused: SDPA has no score soft-capping (flex_attention's score_mod would be
another kernel than the one this backend tests).
Rows with no visible key: SDPA on the CPU gives exactly 0 (its safe softmax), as opval.
The contract's `mid` rounding of P is not modelled (P in f32 is within the bound); the final
rounding to dst is the adapter's.
Known torch disagreement (kept, not worked around): with no mask and lk below the vector width
(f32: lk < 16, f64: lk < 8), the CPU flash kernel outputs 0 instead of NaN for a query row
whose logits are all NaN (a NaN in Q); the math backend and every masked call give NaN.
"""
from __future__ import annotations

import math
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

from ... import _opval
from ..base import FrameworkOp, attention_has_keyless_rows, attention_scale, attention_sizes, attention_visible


def _may_have_empty_rows(p: _opval.Problem) -> bool:
    """Whether some query row can have no visible key: key lengths may be 0, and a causal mask
    or sliding window can hide every key from a row."""
    return bool(p.get("key_lengths")) or attention_has_keyless_rows(p, None)


def _supports(p: _opval.Problem) -> str | None:
    if p.get("softcap") != 0.0:
        return f"softcap={p.get('softcap')} is not mapped: torch's SDPA has no score soft-capping"
    # NaN queries (fill=special) in a row with no visible key: opval never reads a masked
    # key and outputs 0; SDPA masks by adding -inf to the computed logit (a boolean mask
    # too), and NaN + -inf = NaN, so torch gives a NaN row. Only emulation could give 0.
    if p.fill == "special" and _may_have_empty_rows(p):
        return ("fill=special with a row that may see no key (key lengths, a causal mask or window): SDPA masks "
                "additively, so a NaN query row with no visible key is NaN in torch, 0 in opval (masked keys never read)")
    return None


def _visible(p: _opval.Problem, x: dict, lq: int, lk: int) -> torch.Tensor | None:
    """The boolean visibility of key j to query i ([lq,lk], or [b,1,lq,lk] with key lengths;
    True = attends), None when every key is visible."""
    fixed = attention_visible(p, lq, lk)
    mask = None if fixed is None else torch.from_numpy(fixed)
    if p.get("key_lengths"):
        lengths = x["key_lengths"].to(torch.int64)
        keys = torch.arange(lk)[None, :] < lengths[:, None]  # [b, lk]
        keys = keys[:, None, None, :]  # [b, 1, 1, lk]: broadcast over heads and query rows
        mask = keys if mask is None else keys & mask
    return mask


def _attention(p: _opval.Problem, x: dict, compute: torch.dtype) -> list[torch.Tensor]:
    s = attention_sizes(p)
    lq, lk = s["lq"], s["lk"]
    kwargs = {"scale": attention_scale(p), "enable_gqa": s["hkv"] != s["h"]}
    bias = x.get("mask")  # any mask_shape: [lq, lk] or [b|1, h|1, lq, lk], broadcast by SDPA
    window = p.get("window_left") >= 0 or p.get("window_right") >= 0
    if bias is None and not p.get("key_lengths") and not window:
        causal = p.get("causal")
        if causal == "top_left":
            kwargs["is_causal"] = True
        elif causal == "bottom_right":
            kwargs["attn_mask"] = _lower_right(lq, lk)
    else:
        visible = _visible(p, x, lq, lk)
        if bias is None:
            kwargs["attn_mask"] = visible
        elif visible is None:
            kwargs["attn_mask"] = bias
        else:
            kwargs["attn_mask"] = torch.where(visible, bias, -math.inf)
    return [F.scaled_dot_product_attention(x["q"], x["k"], x["v"], **kwargs)]


def _lower_right(lq: int, lk: int):
    """torch's own bottom-right causal bias. It warns of NaNs when lq > lk, but SDPA on the
    CPU gives those keyless rows exactly 0, which is opval's semantics (the suite checks it)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Lower right causal bias will produce NaNs")
        return causal_lower_right(lq, lk)


ATTENTION_OPS = {
    "attention": FrameworkOp(_attention, _supports),
}
