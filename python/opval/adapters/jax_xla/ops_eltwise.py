"""Element-wise ops in JAX: relu, gelu, silu, tanh, erf, add, mul, div, cast (add and mul on integer contracts
in the operands' own type, which XLA wraps modulo 2^bits, as the contract does)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special

from ... import _opval
from ..base import FrameworkOp
from .static import StaticProblem


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


def _cast(p: StaticProblem, x: dict, compute) -> list[jax.Array]:
    """x * scale in the accumulation type (scale rounded to it), clamped as cast_choices says;
    the final rounding is the adapter's."""
    y = x["x"].astype(compute)  # integer and bool sources widen here, as XLA converts them
    scale = p.get("scale")
    if scale != 1:
        y = y * jnp.asarray(scale, dtype=compute)
    clamp = p.choice("clamp")
    if clamp is not None:
        lowest, highest, infinities_too = clamp
        y = jnp.where(jnp.isfinite(y), jnp.clip(y, lowest, highest), y)
        if infinities_too:
            y = jnp.clip(y, lowest, highest)
    return [y]


ELTWISE_OPS = {
    "relu": FrameworkOp(lambda p, x, compute: [jax.nn.relu(x["x"])]),
    "gelu": FrameworkOp(lambda p, x, compute: [jax.nn.gelu(x["x"], approximate=p.get("approximate") == "tanh")]),
    "silu": FrameworkOp(lambda p, x, compute: [jax.nn.silu(x["x"])]),
    "tanh": FrameworkOp(lambda p, x, compute: [jnp.tanh(x["x"])]),
    "erf": FrameworkOp(lambda p, x, compute: [jax.scipy.special.erf(x["x"])]),
    "add": FrameworkOp(lambda p, x, compute: [jnp.add(x["a"], x["b"])]),
    "mul": FrameworkOp(lambda p, x, compute: [jnp.multiply(x["a"], x["b"])]),
    "div": FrameworkOp(lambda p, x, compute: [jnp.divide(x["a"], x["b"])]),
    "cast": FrameworkOp(_cast),
}

ELTWISE_CHOICES = {"cast": cast_choices}
