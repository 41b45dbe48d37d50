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
from ..epilogue import ArrayOps, gemm_epilogue

_OPS = ArrayOps(
    scalar=lambda value, dtype: torch.tensor(value, dtype=dtype),  # rounded once to dtype, no guessed promotion
    astype=lambda t, dtype: t.to(dtype),
    clip=lambda t, lo, hi: t.clamp(lo, hi),
    activations={
        "none": lambda z: z,
        "relu": torch.relu,
        "gelu": lambda z: F.gelu(z, approximate="none"),  # opval's gelu is the erf form
        "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
        "silu": F.silu,
    },
)


def _dot_operand(t: torch.Tensor, zp: int, compute: torch.dtype) -> torch.Tensor:
    """A or B as the dot product uses it: integer operands widened to float64 (exact) with
    their zero point removed; float operands as they came (already in the compute type)."""
    if t.is_floating_point():
        return t
    wide = t.to(torch.float64)
    return wide - zp if zp != 0 else wide


def _epilogue(p: _opval.Problem, x: dict, s: torch.Tensor, compute: torch.dtype, channel_shape: list[int]) -> torch.Tensor:
    dst = p.contract.dst
    return gemm_epilogue(p, x, s, compute, channel_shape, None if _opval.dtype_info(dst).is_float else dst, _OPS)


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
    "conv2d": FrameworkOp(_conv2d, lambda p: "torch's conv2d refuses zero output channels" if p.get("oc") == 0 else None),
}
