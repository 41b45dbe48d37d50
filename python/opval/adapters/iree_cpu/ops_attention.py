"""attention for IREE: its ONNX importer (3.13) has no lowering for the Attention operator
(opset 23), so the case's model is the decomposition exporters write without it, in the
compute type:
    S = (Q grouped [b, hkv, h/hkv, lq, d]) MatMul K^T [b, hkv, 1, d, lk]     (GQA: query head h
        reads kv head h // (H/Hkv), as opval)
    S = scale·S; softcap·Tanh(S/softcap) where softcap != 0; + bias (grouped as S)
    S = Where(visible, S, -inf)      (causal mask, window: constants; key lengths: Less(Range, L))
    P = Softmax(S); P = Where(the row sees a key, P, 0)    (a row with no visible key is 0)
    O = P MatMul V [b, hkv, 1, lk, dv], reshaped to [b, h, lq, dv]
The contract's `mid` rounding of P is not modelled, as in the other adapters; a row whose
visible keys all have a -inf bias is NaN (the softmax of all -inf logits), 0 in opval."""
from __future__ import annotations

import numpy as np

from ..base import attention_scale, attention_sizes, attention_visible
from ..onnxruntime.case import onnx_op
from ..onnxruntime.graph import Graph, TensorProto, onnx_type


def _grouped(g: Graph, bias: str, shape: tuple[int, ...], h: int, hkv: int) -> str:
    """The [b|1, h|1, lq, lk] (or [lq, lk]) bias as [b|1, hkv|1, h/hkv|1, lq, lk]."""
    full = (1, 1, *shape) if len(shape) == 2 else shape
    groups = (hkv, h // hkv) if full[1] == h else (1, 1)
    return g.op("Reshape", bias, g.const([full[0], *groups, *full[2:]], np.int64))


def _visible(g: Graph, p, x: dict, s: dict[str, int]) -> str | None:
    """Booleans broadcasting against S [b, hkv, g, lq, lk]; None when every key is visible."""
    fixed = attention_visible(p, s["lq"], s["lk"])
    visible = None if fixed is None else g.const(fixed, np.bool_)
    if p.get("key_lengths"):
        lengths = x["key_lengths"].reshape(-1, 1, 1, 1, 1)
        keys = g.op("Less", g.const(np.arange(s["lk"]).reshape(1, 1, 1, 1, -1), lengths.dtype),
                    g.input("key_lengths", lengths), out_type=TensorProto.BOOL)
        visible = keys if visible is None else g.op("And", keys, visible, out_type=TensorProto.BOOL)
    return visible


def _attention(p, x: dict, compute) -> Graph:
    g = Graph("attention")
    s = attention_sizes(p)
    b, h, hkv, lq, lk, d, dv = (s[n] for n in ("b", "h", "hkv", "lq", "lk", "d", "dv"))
    q = g.op("Reshape", g.input("q", x["q"]), g.const([b, hkv, h // hkv, lq, d], np.int64))
    k = g.op("Unsqueeze", g.input("k", x["k"]), g.const([2], np.int64))
    v = g.op("Unsqueeze", g.input("v", x["v"]), g.const([2], np.int64))
    scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 2, 4, 3])),
                  g.const(attention_scale(p), compute))
    if (cap := p.get("softcap")) != 0.0:
        capped = g.const(cap, compute)
        scores = g.op("Mul", capped, g.op("Tanh", g.op("Div", scores, capped)))
    if "mask" in x:
        scores = g.op("Add", scores, _grouped(g, g.input("mask", x["mask"]), x["mask"].shape, h, hkv))
    visible = _visible(g, p, x, s)
    if visible is not None:
        scores = g.op("Where", visible, scores, g.const(-np.inf, compute), out_type=onnx_type(compute))
    probs = g.op("Softmax", scores, axis=-1)
    if visible is not None:
        sees = g.op("ReduceMax", g.op("Cast", visible, to=TensorProto.FLOAT, out_type=TensorProto.FLOAT),
                    g.const([-1], np.int64), keepdims=1)
        probs = g.op("Where", g.op("Greater", sees, g.const(0.0, np.float32), out_type=TensorProto.BOOL), probs,
                     g.const(0.0, compute), out_type=onnx_type(compute))
    out = g.op("Reshape", g.op("MatMul", probs, v), g.const([b, h, lq, dv], np.int64))
    g.output(out, p.outputs()[0].shape)
    return g


ATTENTION_OPS = {"attention": onnx_op(_attention)}
