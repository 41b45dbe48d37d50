"""Normalizations and reductions in torch: softmax, log_softmax, layer_norm, rms_norm, group_norm,
reduce."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ... import _opval
from ..base import FrameworkOp


def _normalized_shape(p: _opval.Problem, x: torch.Tensor) -> list[int]:
    return list(x.shape[x.dim() - p.get("norm_axes"):])


def _layer_norm(p, x, compute):
    shape = _normalized_shape(p, x["x"])
    if p.get("stats"):
        # y, mean and rstd (shaped as x with the normalized dims 1), as opval's stats=1 outputs.
        return list(torch.native_layer_norm(x["x"], shape, x.get("gamma"), x.get("beta"), p.get("eps")))
    return [F.layer_norm(x["x"], shape, x.get("gamma"), x.get("beta"), eps=p.get("eps"))]


def _rms_norm(p, x, compute):
    shape = _normalized_shape(p, x["x"])
    return [F.rms_norm(x["x"], shape, x.get("gamma"), eps=p.get("eps"))]


def _group_norm(p, x, compute):
    """F.group_norm over x's channel groups; channels-last x keeps its strides."""
    return [F.group_norm(x["x"], p.get("groups"), x.get("gamma"), x.get("beta"), eps=p.get("eps"))]


def _reduce(p, x, compute):
    """sum, mean or max over `axes`; an empty reduction gives 0, NaN and -inf as opval's."""
    src = x["x"]
    axes = sorted({a % src.dim() for a in p.get("axes")}) if src.dim() else []
    keep = p.get("keepdims")
    kind = p.get("kind")
    if any(src.shape[a] == 0 for a in axes):
        shape = [1 if i in axes else n for i, n in enumerate(src.shape)] if keep else [n for i, n in enumerate(src.shape) if i not in axes]
        empty = {"sum": 0.0, "mean": math.nan, "max": -math.inf}[kind]
        return [torch.full(shape, empty, dtype=compute if src.is_floating_point() else torch.float64)]
    if not src.is_floating_point():
        src = src.to(torch.float64)  # i32 sums, exactly
    if not axes:
        return [src.clone()]
    if kind == "sum":
        return [src.sum(dim=axes, keepdim=keep)]
    if kind == "mean":
        return [src.mean(dim=axes, keepdim=keep)]
    return [src.amax(dim=axes, keepdim=keep)]


NORM_OPS = {
    "softmax": FrameworkOp(lambda p, x, compute: [torch.softmax(x["x"], dim=p.get("axis"))]),
    "log_softmax": FrameworkOp(lambda p, x, compute: [torch.log_softmax(x["x"], dim=p.get("axis"))]),
    "layer_norm": FrameworkOp(_layer_norm),
    "rms_norm": FrameworkOp(_rms_norm),
    "group_norm": FrameworkOp(_group_norm),
    "reduce": FrameworkOp(_reduce),
}
