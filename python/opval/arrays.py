"""Arrays in and out of opval: opval tensors as NumPy arrays or PyTorch tensors over the same
memory (no copy), and kernels' results back as NumPy arrays.

NumPy has no bf16 or fp8 types; ml_dtypes' bfloat16, float8_e4m3fn and float8_e5m2 stand for
them (the types JAX uses). tf32 tensors are stored as float32.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from . import _opval
from ._opval import dtype

_NUMPY_TYPES = {
    dtype.f64: np.dtype(np.float64),
    dtype.f32: np.dtype(np.float32),
    dtype.tf32: np.dtype(np.float32),
    dtype.f16: np.dtype(np.float16),
    dtype.bf16: np.dtype(ml_dtypes.bfloat16),
    dtype.f8_e4m3: np.dtype(ml_dtypes.float8_e4m3fn),
    dtype.f8_e5m2: np.dtype(ml_dtypes.float8_e5m2),
    dtype.i8: np.dtype(np.int8),
    dtype.u8: np.dtype(np.uint8),
    dtype.i32: np.dtype(np.int32),
    dtype.i64: np.dtype(np.int64),
    dtype.bool: np.dtype(np.bool_),
}

ARRAY_KINDS = ("numpy", "torch")


def numpy_dtype(t: dtype) -> np.dtype:
    """The NumPy type whose elements hold opval type `t`."""
    return _NUMPY_TYPES[t]


def to_numpy(tensor: _opval.Tensor) -> np.ndarray:
    """`tensor` as a NumPy array over the same memory, typed as numpy_dtype says."""
    raw = tensor.numpy()
    wanted = numpy_dtype(tensor.dtype)
    return raw if raw.dtype == wanted else raw.view(wanted)


def _torch_types() -> dict[dtype, Any]:
    import torch

    return {
        dtype.bf16: torch.bfloat16,
        dtype.f8_e4m3: torch.float8_e4m3fn,
        dtype.f8_e5m2: torch.float8_e5m2,
    }


def to_torch(tensor: _opval.Tensor):
    """`tensor` as a CPU torch.Tensor over the same memory (bf16 and fp8 as torch's own types)."""
    import torch

    special = _torch_types().get(tensor.dtype)
    raw = torch.from_numpy(tensor.numpy())
    return raw.view(special) if special is not None else raw


def as_array(tensor: _opval.Tensor, kind: str):
    """`tensor` in the array type a kernel asked for: "numpy" or "torch"."""
    if kind == "numpy":
        return to_numpy(tensor)
    if kind == "torch":
        return to_torch(tensor)
    raise ValueError(f"unknown array kind '{kind}' (known: {', '.join(ARRAY_KINDS)})")


def from_any(value: Any) -> np.ndarray:
    """A kernel's result as a NumPy array: NumPy arrays as they are, torch tensors through
    their memory (bf16 and fp8 included), anything else (JAX arrays, lists) through
    np.asarray."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch"):
        import torch

        value = value.detach().cpu()
        reinterpret = {torch.bfloat16: (torch.uint16, ml_dtypes.bfloat16),
                       torch.float8_e4m3fn: (torch.uint8, ml_dtypes.float8_e4m3fn),
                       torch.float8_e5m2: (torch.uint8, ml_dtypes.float8_e5m2)}.get(value.dtype)
        if reinterpret is not None:
            return value.view(reinterpret[0]).numpy().view(reinterpret[1])
        return value.numpy()
    return np.asarray(value)
