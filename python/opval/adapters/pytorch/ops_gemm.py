"""GEMM-like ops in torch: matmul (torch.matmul) and conv2d (F.conv2d), with opval's epilogue.

The epilogue follows src/ops/common_gemm/epilogue.hpp, step by step in the compute type:
    s   = sum_k (a - zp_a) * (b - zp_b)                (zero points only on integer contracts)
    z   = (alpha * scale_a * scale_b[ch]) * s + beta * C + bias[ch]
    y   = act(z) + residual
    dst = y                                            (float dst)
    dst = y / scale_dst + zp_dst, clamped to dst's range (integer dst; the adapter rounds)
`ch` is the output channel: matmul's n (last dim), conv2d's oc (dim 1).

Integer contracts (u8xi8 / i8xi8 with i32 accumulation) run in float64: the operands widen
exactly, and every product (|.| < 2^17) and every sum of the suites' K terms (< 2^31, which
validate() guarantees) is an integer below 2^53, so the float64 GEMM is the exact i32 sum in
any order. fp8 inputs arrive widened exactly to float32 by the adapter.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ... import _opval
from ..base import FrameworkOp

_ACTIVATIONS = {
    "none": lambda z: z,
    "relu": torch.relu,
    "gelu": lambda z: F.gelu(z, approximate="none"),  # opval's gelu is the erf form
    "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
    "silu": F.silu,
}


def _scalar(value: float, compute: torch.dtype) -> torch.Tensor:
    """An attribute as a 0-d tensor of the compute type, so that torch rounds it there once
    (as a kernel holding it in its epilogue type does) instead of guessing a promotion."""
    return torch.tensor(value, dtype=compute)


def _dot_operand(t: torch.Tensor, zp: int, compute: torch.dtype) -> torch.Tensor:
    """A or B as the dot product uses it: integer operands widened to float64 (exact) with
    their zero point removed; float operands as they came (already in the compute type)."""
    if t.is_floating_point():
        return t
    wide = t.to(torch.float64)
    return wide - zp if zp != 0 else wide


def _dequant_factor(p: _opval.Problem, x: dict, compute: torch.dtype) -> torch.Tensor | None:
    """alpha * scale_a * scale_b[ch] (the spec folds it in that order: (alpha*scale_a)*scale_b),
    per channel as a 1-D tensor [channels] or per tensor as a 0-d one; None when it is 1."""
    head = p.get("alpha") * p.get("scale_a")
    if p.get("scale_b_mode") == "per_channel":
        # The scale_b operand already holds scale_b * its per-channel values (opval's fill).
        return _scalar(head, compute) * x["scale_b"].to(compute)
    factor = head * p.get("scale_b")
    return None if factor == 1.0 else _scalar(factor, compute)


def _epilogue(p: _opval.Problem, x: dict, s: torch.Tensor, compute: torch.dtype, channel_shape: list[int]) -> torch.Tensor:
    """From the dot products s to the value before the final rounding to dst.
    channel_shape: how a per-channel vector [channels] broadcasts against s."""
    z = s.to(compute)
    factor = _dequant_factor(p, x, compute)
    if factor is not None:
        z = z * (factor.reshape(channel_shape) if factor.dim() else factor)
    beta = p.get("beta") if "beta" in p.attrs else 0.0
    if beta != 0.0:
        z = z + _scalar(beta, compute) * x["C"]
    if p.get("bias"):
        z = z + x["bias"].reshape(channel_shape)
    y = _ACTIVATIONS[p.get("act")](z)
    if p.get("residual"):
        y = y + x["residual"]
    return _quantize_dst(p, y)


def _quantize_dst(p: _opval.Problem, y: torch.Tensor) -> torch.Tensor:
    """Integer dst: y / scale_dst + zp_dst, clamped to the type's range as opval's reference
    does (the adapter's round-half-even + saturate then gives the same integers)."""
    dst = p.contract.dst
    info = _opval.dtype_info(dst)
    if info.is_float:
        return y
    scale_dst, zp_dst = p.get("scale_dst"), p.get("zp_dst")
    if scale_dst != 1.0:
        y = y / _scalar(scale_dst, y.dtype)
    if zp_dst != 0:
        y = y + _scalar(float(zp_dst), y.dtype)
    return y.clamp(info.lowest, info.max)


def _matmul(p: _opval.Problem, x: dict, compute: torch.dtype) -> list[torch.Tensor]:
    """A [batch_a..., m, k] @ B [batch_b..., k, n]. ta/tb/lda/ldb only change the strides of
    the logical-shape views the adapter passes, and torch.matmul broadcasts the batch dims
    NumPy-style exactly as opval does (right-aligned, extents of 1 stretch)."""
    a = _dot_operand(x["A"], p.get("zp_a"), compute)
    b = _dot_operand(x["B"], p.get("zp_b"), compute)
    return [_epilogue(p, x, torch.matmul(a, b), compute, [-1])]


def _conv2d(p: _opval.Problem, x: dict, compute: torch.dtype) -> list[torch.Tensor]:
    """F.conv2d on logical NCHW / OIHW views (layout=nhwc: channels-last strides, which
    F.conv2d takes as they are). Asymmetric padding goes through F.pad (zeros) since
    F.conv2d pads symmetrically; integer src pads after its zero point is removed, which is
    opval's padding with zp_a. Bias is the epilogue's, added after the scales."""
    src = _dot_operand(x["src"], p.get("zp_a"), compute)
    wei = _dot_operand(x["weights"], p.get("zp_b"), compute)
    pad = (p.get("pl"), p.get("pr"), p.get("pt"), p.get("pb"))
    if any(pad):
        src = F.pad(src, pad)
    s = F.conv2d(src, wei, None, stride=(p.get("sh"), p.get("sw")), dilation=(p.get("dh"), p.get("dw")),
                 groups=p.get("g"))
    return [_epilogue(p, x, s, compute, [1, -1, 1, 1])]


GEMM_OPS = {
    "matmul": FrameworkOp(_matmul),
    "conv2d": FrameworkOp(_conv2d),
}
