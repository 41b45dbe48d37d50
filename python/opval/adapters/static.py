"""The part of a problem a compiled framework function is specialized on: a hashable, static
view of the op's attributes, passed to jax.jit as a static argument (JAX's own cache then keys
the compiled code by (op, attributes) and the operands' shapes and types) and keying the
TensorFlow adapter's tf.functions the same way."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _opval

# Attributes that only say how operands lie in memory (strides, transposes stored as views,
# padded rows): the adapters hand the framework logical-shape arrays, so they change nothing traced,
# and leaving them out of the key lets such cases share a compiled function.
LAYOUT_ONLY = frozenset({"stride_pad", "step", "ld", "lda", "ldb", "ldc", "ta", "tb", "layout"})


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


_NO_DEFAULT = object()


@dataclass(frozen=True)
class StaticProblem:
    """op, its computational attributes, and the choices the adapter made on the host from
    the problem and its operands (the output type where an op's computation depends on it,
    attention's path): what an op's run() reads instead of the Problem, which is neither
    hashable by value nor safe to close over. The output type is a choice, not a field, so
    that ops computing only in the compute type (the output type entering through the final
    rounding, on the host) share one compiled function across f32:f32:f32, bf16:f32:bf16,
    f16:f32:f16... cases of one shape: their inputs all arrive converted to f32."""

    op: str
    attrs: tuple[tuple[str, Any], ...]
    choices: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def of(p: _opval.Problem, choices: dict[str, Any] | None = None) -> "StaticProblem":
        attrs = tuple(sorted((k, _frozen(v)) for k, v in p.attrs.items() if k not in LAYOUT_ONLY))
        return StaticProblem(p.op, attrs, tuple(sorted((choices or {}).items())))

    def get(self, name: str) -> Any:
        """The attribute's value (lists as lists), as Problem.get."""
        for key, value in self.attrs:
            if key == name:
                return list(value) if isinstance(value, tuple) else value
        raise KeyError(f"{self.op}: '{name}' is not an attribute the compiled function is keyed on"
                       f"{' (layout only: resolved before the call)' if name in LAYOUT_ONLY else ''}")

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.attrs)

    def choice(self, name: str, default: Any = _NO_DEFAULT) -> Any:
        """A choice made on the host; without a default, a missing one is an error (the op's
        choices function must make it, or the compile key would not hold it)."""
        for key, value in self.choices:
            if key == name:
                return value
        if default is _NO_DEFAULT:
            raise KeyError(f"{self.op}: no host choice '{name}' in the compile key")
        return default
