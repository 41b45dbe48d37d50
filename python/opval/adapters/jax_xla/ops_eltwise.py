"""Element-wise ops in JAX: relu, gelu, silu, tanh, erf, add, mul, div, cast (add and mul on integer contracts
in the operands' own type, which XLA wraps modulo 2^bits, as the contract does)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special

from ..base import FrameworkOp
from ..host_choices import cast_choices
from ..static import StaticProblem


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
