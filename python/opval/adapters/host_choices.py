"""Choices an adapter that compiles per op makes on the host before the compiled call, from the
problem and its operands: the output type, in the two ops whose computation reads it. They are
part of the compile key (StaticProblem.choices); ops that only round to the output type at the
end (on the host, adapters/rounding.py) leave it out, so that f32:f32:f32, bf16:f32:bf16 and
f16:f32:f16 cases of one shape share one compiled function."""
from __future__ import annotations

from .. import _opval


def gemm_choices(p: _opval.Problem, x: dict) -> dict:
    """An integer output type enters the computation (the quantization of the epilogue); a
    float one only the host's final rounding, so it stays out of the key."""
    dst = p.contract.dst
    return {} if _opval.dtype_info(dst).is_float else {"int_dst": dst}


def cast_choices(p: _opval.Problem, x: dict) -> dict:
    """The clamp to the output's range, the one place cast's computation reads its output
    type: when the output saturates (saturate=1, or an integer output), finite values beyond
    the range become its ends, and so does Inf for f8_e4m3 (no infinity); NaN stays (an
    integer output makes it 0). Output types that share a clamp share the compiled cast."""
    dst = p.contract.dst
    info = _opval.dtype_info(dst)
    saturates = p.get("saturate") or not info.is_float
    if dst == _opval.dtype.bool or not saturates:
        return {"clamp": None}
    return {"clamp": (info.lowest, info.max, dst == _opval.dtype.f8_e4m3)}
