"""Element-wise ops in torch: relu, gelu, silu, tanh, erf, add, mul, div, cast.

add and mul on integer contracts (i32, i64) compute in the operands' own type: torch wraps
modulo 2^bits, as the contract does."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ... import _opval
from ..base import FrameworkOp
from .types import torch_type


def _binary(fn):
    return FrameworkOp(lambda p, x, compute: [fn(x["a"], x["b"])])


def _cast(p: _opval.Problem, x: dict, compute: torch.dtype) -> list[torch.Tensor]:
    """x * scale in the accumulation type, clamped to the output's range when the output
    saturates (saturate=1, or an integer output), then converted by torch itself to a float
    output type (the conversion is the op under test); integer and bool outputs are rounded
    by the adapter (torch's integer conversion truncates)."""
    y = x["x"].to(compute)
    scale = p.get("scale")
    if scale != 1:
        y = y * torch.tensor(scale, dtype=compute)
    dst = p.contract.dst
    info = _opval.dtype_info(dst)
    if dst != _opval.dtype.bool and (p.get("saturate") or not info.is_float):
        # Finite values beyond the range become its ends; NaN stays (an integer output makes it 0).
        y = torch.where(torch.isfinite(y), y.clamp(info.lowest, info.max), y)
        if dst == _opval.dtype.f8_e4m3:
            y = y.clamp(info.lowest, info.max)  # no infinity in e4m3: Inf saturates too
    return [y.to(torch_type(dst))] if info.is_float else [y]


ELTWISE_OPS = {
    "relu": FrameworkOp(lambda p, x, compute: [torch.relu(x["x"])]),
    "gelu": FrameworkOp(lambda p, x, compute: [F.gelu(x["x"], approximate=p.get("approximate"))]),
    "silu": FrameworkOp(lambda p, x, compute: [F.silu(x["x"])]),
    "tanh": FrameworkOp(lambda p, x, compute: [torch.tanh(x["x"])]),
    "erf": FrameworkOp(lambda p, x, compute: [torch.erf(x["x"])]),
    "add": _binary(torch.add),
    "mul": _binary(torch.mul),
    "div": _binary(torch.div),
    "cast": FrameworkOp(_cast),
}
