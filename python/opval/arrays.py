"""Arrays in and out of opval: opval tensors as NumPy arrays, PyTorch tensors or JAX arrays
over the same memory (NumPy views; DLPack for torch and JAX), and kernels' results back as
NumPy arrays.

NumPy has no bf16 or fp8 types; ml_dtypes' bfloat16, float8_e4m3fn and float8_e5m2 stand for
them (the types JAX uses), and its fnuz, e8m0, fp6, fp4 and int4 types for opval's narrow
formats (one element per byte in both). Through DLPack, torch and JAX get their own bf16 and
fp8 types.
tf32 tensors are stored as float32.
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
    # The narrow formats, one element per byte in opval and in ml_dtypes alike.
    dtype.f8_e4m3fnuz: np.dtype(ml_dtypes.float8_e4m3fnuz),
    dtype.f8_e5m2fnuz: np.dtype(ml_dtypes.float8_e5m2fnuz),
    dtype.f8_e8m0: np.dtype(ml_dtypes.float8_e8m0fnu),
    dtype.f4_e2m1: np.dtype(ml_dtypes.float4_e2m1fn),
    dtype.f6_e2m3: np.dtype(ml_dtypes.float6_e2m3fn),
    dtype.f6_e3m2: np.dtype(ml_dtypes.float6_e3m2fn),
    dtype.i4: np.dtype(ml_dtypes.int4),
    dtype.u4: np.dtype(ml_dtypes.uint4),
}

ARRAY_KINDS = ("numpy", "torch", "jax")


def numpy_dtype(t: dtype) -> np.dtype:
    """The NumPy type whose elements hold opval type `t`."""
    return _NUMPY_TYPES[t]


def to_numpy(tensor: _opval.Tensor) -> np.ndarray:
    """`tensor` as a NumPy array over the same memory, typed as numpy_dtype says."""
    raw = tensor.numpy()
    wanted = numpy_dtype(tensor.dtype)
    return raw if raw.dtype == wanted else raw.view(wanted)


def to_torch(tensor: _opval.Tensor):
    """`tensor` as a CPU torch.Tensor over the same memory, through DLPack (bf16 and fp8 as
    torch's own types)."""
    import torch

    return torch.from_dlpack(tensor)


def to_jax(tensor: _opval.Tensor):
    """`tensor` as a JAX array on the CPU, through DLPack (no copy where XLA accepts the
    layout). JAX arrays are immutable: a JAX kernel returns its outputs. A 64-bit tensor needs
    jax_enable_x64, without which JAX would silently make it 32-bit: an error instead."""
    import jax

    if tensor.dtype in (dtype.f64, dtype.i64) and not jax.config.jax_enable_x64:
        raise TypeError(f"a {_opval.dtype_name(tensor.dtype)} input needs jax_enable_x64 "
                        "(jax.config.update('jax_enable_x64', True)): JAX would make it 32-bit")
    return jax.dlpack.from_dlpack(tensor)


def as_array(tensor: _opval.Tensor, kind: str):
    """`tensor` in the array type a kernel asked for: "numpy", "torch" or "jax"."""
    if kind == "numpy":
        return to_numpy(tensor)
    if kind == "torch":
        return to_torch(tensor)
    if kind == "jax":
        return to_jax(tensor)
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
