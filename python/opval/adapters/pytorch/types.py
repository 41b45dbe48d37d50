"""opval's element types as torch's."""
from __future__ import annotations

import torch

from ... import _opval

_TORCH_TYPES = {
    _opval.dtype.f64: torch.float64, _opval.dtype.f32: torch.float32, _opval.dtype.tf32: torch.float32,
    _opval.dtype.f16: torch.float16, _opval.dtype.bf16: torch.bfloat16, _opval.dtype.f8_e4m3: torch.float8_e4m3fn,
    _opval.dtype.f8_e5m2: torch.float8_e5m2, _opval.dtype.i8: torch.int8, _opval.dtype.u8: torch.uint8,
    _opval.dtype.i32: torch.int32, _opval.dtype.i64: torch.int64, _opval.dtype.bool: torch.bool,
}


def torch_type(t: _opval.dtype) -> torch.dtype:
    return _TORCH_TYPES[t]
