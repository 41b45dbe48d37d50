"""Pooling in torch: max_pool2d, avg_pool2d (torch.nn.functional) and global_avg_pool
(adaptive_avg_pool2d to 1x1).

torch pads symmetrically, by at most half the kernel. max_pool2d's other paddings are padded
with -inf by the adapter first (never a maximum, since no window is padding alone), except
under ceil_mode, where torch would then count the trailing padding as input and keep a last
window opval drops; avg_pool2d's asymmetric paddings are refused (padding zeros would change
the divisor)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ... import _opval
from ..base import FrameworkOp


def _window(p: _opval.Problem) -> dict:
    return {k: p.get(k) for k in ("kh", "kw", "sh", "sw", "pt", "pb", "pl", "pr")}


def _torch_padding(p: _opval.Problem) -> tuple[int, int] | None:
    """torch's (pad_h, pad_w) for this window, or None when torch cannot express it."""
    w = _window(p)
    if w["pt"] != w["pb"] or w["pl"] != w["pr"] or 2 * w["pt"] > w["kh"] or 2 * w["pl"] > w["kw"]:
        return None
    return w["pt"], w["pl"]


def _no_channels(p: _opval.Problem) -> str | None:
    """PyTorch's pooling takes an empty batch but no other empty dimension."""
    return "torch's pooling refuses zero channels (only the batch may be empty)" if p.get("c") == 0 else None


def _max_supports(p: _opval.Problem) -> str | None:
    if why := _no_channels(p):
        return why
    if _torch_padding(p) is None and p.get("ceil_mode"):
        return "asymmetric padding (or padding over half the kernel) with ceil_mode is not expressible in torch's max_pool2d"
    return None


def _max_pool2d(p: _opval.Problem, x: dict, compute: torch.dtype) -> list[torch.Tensor]:
    w, src = _window(p), x["x"]
    if not src.is_floating_point():
        src = src.to(torch.float64)  # integer inputs, exactly (torch pools floats only)
    padding = _torch_padding(p)
    if padding is None:
        src = F.pad(src, (w["pl"], w["pr"], w["pt"], w["pb"]), value=-torch.inf)
        padding = (0, 0)
    return [F.max_pool2d(src, (w["kh"], w["kw"]), (w["sh"], w["sw"]), padding, (p.get("dh"), p.get("dw")),
                         ceil_mode=p.get("ceil_mode"))]


def _avg_supports(p: _opval.Problem) -> str | None:
    if why := _no_channels(p):
        return why
    if _torch_padding(p) is None:
        return "asymmetric padding (or padding over half the kernel) is not expressible in torch's avg_pool2d"
    return None


def _avg_pool2d(p: _opval.Problem, x: dict, compute: torch.dtype) -> list[torch.Tensor]:
    w = _window(p)
    return [F.avg_pool2d(x["x"], (w["kh"], w["kw"]), (w["sh"], w["sw"]), _torch_padding(p), ceil_mode=p.get("ceil_mode"),
                         count_include_pad=p.get("count_include_pad"))]


POOL_OPS = {
    "max_pool2d": FrameworkOp(_max_pool2d, _max_supports),
    "avg_pool2d": FrameworkOp(_avg_pool2d, _avg_supports),
    "global_avg_pool": FrameworkOp(lambda p, x, compute: [F.adaptive_avg_pool2d(x["x"], 1)]),
}
