"""Scaled dot-product attention in ONNX: the opset-23 Attention operator, which ORT's CPU
provider implements (float32; every opval attention contract computes in float32).

Q [b, h, lq, d], K [b, hkv, lk, d], V [b, hkv, lk, dv] as 4-D inputs: Attention reads the head
counts from the shapes and groups query heads over kv heads as opval (h // (h/hkv)).
  - scale: the `scale` attribute (opval's, or 1/sqrt(d)), a float32;
  - softcap: the `softcap` attribute (ONNX caps scale*QK^T before adding the mask, as opval);
  - causal=top_left alone: is_causal=1 (ONNX's causal is the upper-left aligned j <= i);
  - otherwise one attn_mask: boolean (True = attend) from causal and the sliding window
    (bottom_right: j <= i + lk - lq; a constant) and key_lengths (Less(arange(lk),
    key_lengths[b]), built in the graph), or, with mask=bias, the float bias (any mask_shape:
    [lq, lk] or [b|1, h|1, lq, lk], which attn_mask broadcasts) with -inf at the invisible keys
    (Where(visible, bias, -inf)).
The contract's `mid` rounding of P is not modelled; the final rounding to dst is the adapter's.
(Opset 24 adds nonpad_kv_seqlen for per-batch key lengths; the models stay at opset 23, where
a boolean mask says the same.)
"""
from __future__ import annotations

import numpy as np

from ... import _opval
from ..base import attention_scale, attention_visible
from .case import onnx_op
from .graph import Graph, TensorProto


def _attention(p: _opval.Problem, x: dict, compute) -> Graph:
    g = Graph("attention")
    q, k, v = (g.input(n, x[n]) for n in ("q", "k", "v"))
    lq, lk = p.get("lq"), p.get("lk")
    attrs = {"scale": attention_scale(p)}
    if p.get("softcap") != 0.0:
        attrs["softcap"] = p.get("softcap")
    visible = None  # a boolean value name: True = attends
    fixed = attention_visible(p, lq, lk)
    window = p.get("window_left") >= 0 or p.get("window_right") >= 0
    if p.get("causal") == "top_left" and not window and "mask" not in x and not p.get("key_lengths"):
        attrs["is_causal"] = 1
    elif fixed is not None:
        visible = g.const(fixed, np.bool_)
    if p.get("key_lengths"):
        lengths = x["key_lengths"].reshape(-1, 1, 1, 1)  # [b, 1, 1, 1]
        keys = g.op("Less", g.const(np.arange(lk).reshape(1, 1, 1, lk), lengths.dtype), g.input("key_lengths", lengths),
                    out_type=TensorProto.BOOL)  # [b, 1, 1, lk]
        visible = keys if visible is None else g.op("And", keys, visible)
    inputs = [q, k, v]
    if "mask" in x:
        bias = g.input("mask", x["mask"])
        inputs.append(bias if visible is None else g.op("Where", visible, bias, g.const(-np.inf, compute)))
    elif visible is not None:
        inputs.append(visible)
    g.output(g.op("Attention", *inputs, **attrs), p.outputs()[0].shape)
    return g


ATTENTION_OPS = {
    "attention": onnx_op(_attention),
}
