"""What a Python kernel supports, attribute by attribute (opval.check's `attrs`):

    attrs={"bias": False,                 # one value
           "act": ["none", "relu"],       # a list of values
           "beta": opval.between(0, 0),   # a closed range
           "shape": opval.rank(2),        # dims of a given rank
           "pt": opval.where(lambda v: v < 4, "padding below 4")}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Selector", "between", "one_of", "rank", "where", "selector"]


class Selector:
    """A set of allowed attribute values, with a description for SKIPPED reasons."""

    def allows(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class _OneOf(Selector):
    values: tuple

    def allows(self, value: Any) -> bool:
        return any(_same(value, v) for v in self.values)

    def describe(self) -> str:
        return " or ".join(attr_text(v) for v in self.values)


@dataclass(frozen=True)
class _Between(Selector):
    lo: float
    hi: float

    def allows(self, value: Any) -> bool:
        return self.lo <= value <= self.hi

    def describe(self) -> str:
        return f"{self.lo} to {self.hi}"


@dataclass(frozen=True)
class _Where(Selector):
    predicate: Callable[[Any], bool]
    text: str

    def allows(self, value: Any) -> bool:
        return bool(self.predicate(value))

    def describe(self) -> str:
        return self.text


def between(lo: float, hi: float) -> Selector:
    """Values from lo to hi, both included."""
    return _Between(lo, hi)


def one_of(*values: Any) -> Selector:
    """Any of these values."""
    return _OneOf(tuple(values))


def rank(*ranks: int) -> Selector:
    """dims attributes (shapes) of these ranks: rank(2) is 2-D only."""
    return _Where(lambda dims: len(dims) in ranks, " or ".join(f"rank {r}" for r in ranks))


def where(predicate: Callable[[Any], bool], text: str) -> Selector:
    """Values for which predicate(value) is true; `text` says which, for the SKIPPED reason."""
    return _Where(predicate, text)


def selector(allowed: Any, kind: str = "") -> Selector:
    """A Selector from what check(attrs=...) accepts: a Selector, a list, tuple or set of
    values, or one value. For a dims attribute (kind "dims") a list of integers is one value
    (a shape; [] is a scalar) and a list of such lists is several."""
    if isinstance(allowed, Selector):
        return allowed
    if kind == "dims" and isinstance(allowed, (list, tuple)) and all(isinstance(v, int) for v in allowed):
        return _OneOf((tuple(allowed),))
    if isinstance(allowed, (list, tuple, set, frozenset)):
        return _OneOf(tuple(allowed))
    return _OneOf((allowed,))


def _same(value: Any, allowed: Any) -> bool:
    """Equality that treats a dims value (a list) and a tuple alike."""
    if isinstance(value, list) and isinstance(allowed, (list, tuple)):
        return list(value) == list(allowed)
    return value == allowed


def attr_text(v: Any) -> str:
    """An attribute value as a descriptor writes it (a dims list as 4x8, [] as scalar)."""
    if isinstance(v, (list, tuple)):
        return "x".join(str(x) for x in v) if v else "scalar"
    return str(v)
