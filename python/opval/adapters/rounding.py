"""The one rounding of a framework's result to the output type, in NumPy: every adapter hands
its results here (torch's as NumPy views), so all round alike and exactly once."""
from __future__ import annotations

import numpy as np

from .. import _opval
from ..arrays import numpy_dtype, to_numpy

# ml_dtypes converts float64 to these through float32, rounding twice (1 + 2^-8 + 2^-40 becomes
# bf16 1.0, not 1 + 2^-7); float64 reaches them through a round-to-odd float32, which makes
# the second rounding the only one (float32 keeps more than 2 bits beyond each of them).
_DOUBLE_ROUNDED_FROM_F64 = frozenset({_opval.dtype.bf16, _opval.dtype.f8_e4m3, _opval.dtype.f8_e5m2})


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 truncated toward zero, with the last bit set when inexact."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        back = f.astype(np.float64)
    inexact = np.isfinite(x) & (back != x)
    f = np.where(inexact & (np.abs(back) > np.abs(x)), np.nextafter(f, np.float32(0)), f)
    bits = f.view(np.uint32)
    return np.where(inexact, bits | np.uint32(1), bits).view(np.float32)


def output_type(p: _opval.Problem, operand: _opval.Operand, target: _opval.Tensor) -> _opval.dtype:
    """The type an adapter rounds a result to: the output tensor's, which is the operand's own
    type, or f64 when the adapter runs as a float64 reference and is handed f64 outputs. Except
    for cast: its conversion to the operand's type (saturation, NaN to 0, bools) is the op, so
    even a float64 reference converts."""
    return operand.dtype if p.op == "cast" else target.dtype


def store(p: _opval.Problem, values: list[np.ndarray], outputs: list[_opval.Tensor]) -> bool:
    """Rounds each result once, to output_type, into its output tensor. True when a result
    handed an f64 tensor (a float64 reference) was rounded to the output's type nonetheless
    (a cast): the runner then judges against it as a reference at the contract."""
    rounded = False
    for value, target, operand in zip(values, outputs, p.outputs()):
        want = output_type(p, operand, target)
        rounded = rounded or want != target.dtype
        if want == target.dtype and want != operand.dtype:  # a float64 reference's unrounded result
            value = within_range(value, operand.dtype)
        np.copyto(to_numpy(target), round_to_output(value, want))
    return rounded


def within_range(x: np.ndarray, dtype: _opval.dtype) -> np.ndarray:
    """x with an integer output type's range applied but not its rounding: saturation is part
    of the op (opval's own reference saturates), NaN gives 0. Float types: x unchanged."""
    info = _opval.dtype_info(dtype)
    if info.is_float or dtype == _opval.dtype.bool:
        return x
    limits = np.iinfo(numpy_dtype(dtype))
    x = x.astype(np.float64)
    return np.where(np.isnan(x), 0.0, np.clip(x, float(limits.min), float(limits.max)))


def round_to_output(x: np.ndarray, want: _opval.dtype) -> np.ndarray:
    """x rounded once to the opval type `want`: to nearest for floats (past the range: Inf,
    NaN for f8_e4m3); bool is x != 0; integers round half to even and saturate, NaN giving 0."""
    target = numpy_dtype(want)
    if x.dtype == target:
        return x
    if want == _opval.dtype.bool:
        return x != 0
    if _opval.dtype_info(want).is_float:
        if x.dtype == np.float64 and want in _DOUBLE_ROUNDED_FROM_F64:
            x = _round_to_odd_f32(x)
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(target)
    info = np.iinfo(target)
    rounded = np.rint(x.astype(np.float64))
    # Compared as doubles: i64's limits are not doubles, and converting 2^63 would wrap.
    high, low = rounded >= float(info.max), rounded <= float(info.min)
    inside = np.where(high | low | np.isnan(rounded), 0.0, rounded).astype(target)
    return np.where(high, info.max, np.where(low, info.min, inside)).astype(target)
